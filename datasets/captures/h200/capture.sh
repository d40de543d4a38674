#!/bin/bash
# Real logs of a real H200: nvidia-smi views, and the failures a training job dies of.
S=$(dirname "$(realpath "$0")"); C=/tmp/cap; mkdir -p $C; cd $C
(uname -a; cat /etc/os-release; date -u; python3 -c 'import torch,jax;print(torch.__version__,jax.__version__)') > env.txt 2>&1
nvidia-smi > nvidia_smi_default.txt 2>&1
nvidia-smi -L > nvidia_smi_L.txt 2>&1
nvidia-smi -q > nvidia_smi_q.txt 2>&1
nvidia-smi -q -x > nvidia_smi_q_x.xml 2>&1
nvidia-smi -q -d MEMORY,UTILIZATION,ECC,PERFORMANCE,PIDS > nvidia_smi_q_d.txt 2>&1
nvidia-smi topo -m > nvidia_smi_topo.txt 2>&1
nvidia-smi --query-remapped-rows=gpu_bus_id,gpu_uuid,remapped_rows.correctable,remapped_rows.uncorrectable,remapped_rows.pending,remapped_rows.failure --format=csv > remapped.csv 2>&1
nvidia-smi --query-gpu=index,name,uuid,pci.bus_id,driver_version,memory.total,memory.used,memory.free,utilization.gpu,temperature.gpu,power.draw,clocks.sm,ecc.errors.uncorrected.volatile.total --format=csv,noheader,nounits > query_noheader_nounits.csv 2>&1
dmesg -T > dmesg_T.txt 2>&1; dmesg > dmesg.txt 2>&1
nvidia-smi --query-gpu=timestamp,index,uuid,pci.bus_id,memory.used,memory.total,utilization.gpu,utilization.memory,temperature.gpu,power.draw --format=csv -lms 250 > query_gpu_loop.csv 2>&1 &
Q=$!
nvidia-smi --query-compute-apps=timestamp,gpu_uuid,gpu_bus_id,pid,process_name,used_memory --format=csv -l 1 > compute_apps_loop.csv 2>&1 &
A=$!
nvidia-smi dmon -s pucm -o DT > dmon_DT.txt 2>&1 &
D=$!
(sleep 6; nvidia-smi > nvidia_smi_during_train.txt 2>&1; nvidia-smi pmon -c 3 > pmon.txt 2>&1) &
timeout 120 python3 $S/train_oom.py > train_oom.log 2>&1; echo "exit $?" >> train_oom.log
sleep 1; kill $Q $A $D
PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True timeout 60 python3 -c "import torch; x=[torch.empty(50*2**30,dtype=torch.uint8,device='cuda') for _ in range(4)]" > torch_oom_expandable.log 2>&1
timeout 90 torchrun --nproc_per_node=2 $S/ddp_kill.py > torchrun_sigkill.log 2>&1; echo "exit $?" >> torchrun_sigkill.log
timeout 90 python3 $S/loader_kill.py > dataloader_killed.log 2>&1; echo "exit $?" >> dataloader_killed.log
NCCL_DEBUG=INFO TORCH_NCCL_ASYNC_ERROR_HANDLING=1 timeout 75 torchrun --nproc_per_node=2 $S/nccl_two_ranks.py > nccl_two_ranks.log 2>&1; echo "exit $?" >> nccl_two_ranks.log
XLA_PYTHON_CLIENT_PREALLOCATE=false timeout 90 python3 -c "import jax, jax.numpy as jnp; print(jax.devices()); x = jnp.ones((60_000_000_000,), dtype=jnp.float32); print(x.sum())" > jax_oom.log 2>&1; echo "exit $?" >> jax_oom.log
timeout 60 python3 -c "import cupy; a = cupy.empty(200 * 10**9, dtype=cupy.uint8)" > cupy_oom.log 2>&1
timeout 120 python3 $S/lightning_oom.py > lightning_oom.log 2>&1; echo "exit $?" >> lightning_oom.log
nvidia-smi > nvidia_smi_after.txt 2>&1
tar czf ${OUT:-/tmp}/cap.tar.gz -C /tmp cap; ls -la $C
