"""Two NCCL ranks on one GPU, then a collective that rank 1 never joins."""
import datetime
import os
import time

import torch
import torch.distributed as dist

rank = int(os.environ["RANK"])
torch.cuda.set_device(0)
dist.init_process_group("nccl", timeout=datetime.timedelta(seconds=20), device_id=torch.device("cuda:0"))
t = torch.ones(1 << 20, device="cuda")
dist.all_reduce(t)
torch.cuda.synchronize()
print(f"rank {rank} first all_reduce ok", flush=True)
if rank == 0:
    dist.all_reduce(t)
    torch.cuda.synchronize()
else:
    time.sleep(60)
