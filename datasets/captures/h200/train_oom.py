"""A training loop whose activations grow until the GPU runs out of memory."""
import logging
import time

import torch

logging.basicConfig(format="%(asctime)s %(levelname)s %(name)s: %(message)s", level=logging.INFO)
log = logging.getLogger("train")
device = torch.device("cuda:0")
log.info("device %s (%s), torch %s", device, torch.cuda.get_device_name(0), torch.__version__)
model = torch.nn.Linear(8192, 8192, device=device)
opt = torch.optim.AdamW(model.parameters())
held = []
for step in range(100):
    x = torch.randn(4096 * (step + 1), 8192, device=device)
    loss = model(x).square().mean()
    loss.backward()
    opt.step()
    opt.zero_grad()
    held.append(torch.empty(24 * 2**30, dtype=torch.uint8, device=device))
    log.info("step %d loss %.4f allocated %.2f GiB reserved %.2f GiB", step, loss.item(),
             torch.cuda.memory_allocated() / 2**30, torch.cuda.memory_reserved() / 2**30)
    time.sleep(0.5)
