"""Two NCCL ranks on one GPU, told apart as two hosts; rank 1 skips a collective, so rank 0's watchdog times out."""
import datetime
import os
import time

import torch
import torch.distributed as dist

rank = int(os.environ["RANK"])
os.environ["NCCL_HOSTID"] = f"node-{rank}"  # else NCCL refuses two ranks on one GPU
torch.cuda.set_device(0)
dist.init_process_group("nccl", timeout=datetime.timedelta(seconds=15), device_id=torch.device("cuda:0"))
t = torch.ones(1 << 20, device="cuda")
dist.all_reduce(t)
torch.cuda.synchronize()
print(f"rank {rank} first all_reduce ok", flush=True)
if rank == 0:
    dist.all_reduce(t)
    torch.cuda.synchronize()
    print("rank 0 second all_reduce returned", flush=True)
else:
    time.sleep(50)
