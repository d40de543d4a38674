"""A Lightning fit whose batch does not fit on the GPU."""
import lightning as L
import torch
from torch.utils.data import DataLoader, TensorDataset


class Big(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.layer = torch.nn.Linear(1024, 1024)

    def training_step(self, batch, _):
        (x,) = batch
        activations = self.layer(x).repeat(1_300_000, 1)  # about 160 GiB
        return activations.square().mean()

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters())


data = DataLoader(TensorDataset(torch.randn(64, 1024)), batch_size=32)
L.Trainer(max_epochs=1, accelerator="gpu", devices=1, enable_checkpointing=False, logger=False).fit(Big(), data)
