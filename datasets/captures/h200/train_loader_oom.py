"""A training loop whose DataLoader workers grow a cache that never evicts, in a cgroup with a memory limit."""
import logging
import typing

import torch
from torch.utils.data import DataLoader, Dataset

logging.basicConfig(format="%(asctime)s %(levelname)s [%(process)d] %(name)s: %(message)s", level=logging.INFO)
log = logging.getLogger("train")


class Augmented(Dataset):
    cache: typing.ClassVar[list[bytearray]] = []  # per worker process: each has its own copy

    def __len__(self):
        return 10_000

    def __getitem__(self, i):
        block = bytearray(256 * 2**20)
        block[::4096] = b"\x01" * len(block[::4096])  # touch every page
        self.cache.append(block)
        return torch.randn(3, 64, 64)


model = torch.nn.Conv2d(3, 8, 3).cuda()
loader = DataLoader(Augmented(), batch_size=4, num_workers=2)
log.info("training with %d loader workers", loader.num_workers)
for step, batch in enumerate(loader):
    loss = model(batch.cuda()).mean()
    loss.backward()
    log.info("step %d loss %.4f", step, loss.item())
