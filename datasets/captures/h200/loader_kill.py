"""A DataLoader whose worker dies of SIGKILL."""
import os
import signal

import torch
from torch.utils.data import DataLoader, Dataset


class Shards(Dataset):
    def __len__(self):
        return 64

    def __getitem__(self, i):
        if i == 37:
            os.kill(os.getpid(), signal.SIGKILL)
        return torch.zeros(1024)


for epoch in range(2):
    for step, batch in enumerate(DataLoader(Shards(), batch_size=4, num_workers=2)):
        print(f"epoch {epoch} step {step} batch {tuple(batch.shape)}", flush=True)
