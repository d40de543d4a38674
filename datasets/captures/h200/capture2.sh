#!/bin/bash
# Real kernel logs of a real H200 box: a cgroup v2 OOM kill (alone and with memory.oom.group) and Xids from faulting CUDA kernels.
S=$(dirname "$(realpath "$0")"); C=/tmp/cap2; mkdir -p $C; cd $C
(uname -a; ps -p 1 -o comm=; mount | grep cgroup; cat /proc/cmdline; date -u) > env.txt 2>&1

G=/sys/fs/cgroup
echo "+memory" > $G/cgroup.subtree_control 2>>env.txt
mkdir -p $G/rca-oom && echo 300M > $G/rca-oom/memory.max && echo 0 > $G/rca-oom/memory.swap.max 2>/dev/null
bash -c "echo \$\$ > $G/rca-oom/cgroup.procs; exec python3 $S/hog.py" > hog.log 2>&1; echo "exit code $?" >> hog.log
mkdir -p $G/rca-oom-group && echo 300M > $G/rca-oom-group/memory.max && echo 1 > $G/rca-oom-group/memory.oom.group && echo 0 > $G/rca-oom-group/memory.swap.max 2>/dev/null
bash -c "echo \$\$ > $G/rca-oom-group/cgroup.procs; sleep 60 & sleep 61 & exec python3 $S/hog.py" > hog_group.log 2>&1; echo "exit code $?" >> hog_group.log
cat $G/rca-oom/memory.events $G/rca-oom-group/memory.events > memory_events.txt 2>&1
timeout 60 python3 $S/gpu_fault.py wild > gpu_fault_wild.log 2>&1; echo "exit code $?" >> gpu_fault_wild.log
timeout 60 python3 $S/gpu_fault.py trap > gpu_fault_trap.log 2>&1; echo "exit code $?" >> gpu_fault_trap.log
timeout 60 python3 -c "
import torch
x = torch.zeros(8, device='cuda')
i = torch.tensor([1 << 40], device='cuda')
print(x[i])
" > torch_index_fault.log 2>&1; echo "exit code $?" >> torch_index_fault.log
sleep 1
dmesg > dmesg.txt 2>&1; dmesg -T > dmesg_T.txt 2>&1; dmesg --time-format iso > dmesg_iso.txt 2>&1
(journalctl -k --no-pager -o short-iso | tail -300) > journalctl_k.txt 2>&1
nvidia-smi > nvidia_smi_after.txt 2>&1; nvidia-smi -q -d PAGE_RETIREMENT,ROW_REMAPPER,ECC > nvidia_smi_q_retire.txt 2>&1
tar czf ${OUT:-/tmp}/cap2.tar.gz -C /tmp cap2; ls -la $C; tail -5 dmesg.txt
