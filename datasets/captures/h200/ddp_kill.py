"""Two ranks; rank 1 is SIGKILLed as the kernel's OOM killer would."""
import os
import signal
import time

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
print(f"rank {rank} pid {os.getpid()} started", flush=True)
t = torch.ones(4)
dist.all_reduce(t)
time.sleep(1)
if rank == 1:
    os.kill(os.getpid(), signal.SIGKILL)
time.sleep(30)
