#!/bin/bash
# One failure seen from three angles: the kernel kills a DataLoader worker in the job's cgroup, the trainer reports it, nvidia-smi samples the GPU.
S=$(dirname "$(realpath "$0")"); C=/tmp/cap4; mkdir -p $C; cd $C
G=/sys/fs/cgroup; echo "+memory" > $G/cgroup.subtree_control 2>/dev/null
mkdir -p $G/train-job && echo 4G > $G/train-job/memory.max && echo 0 > $G/train-job/memory.swap.max 2>/dev/null
nvidia-smi --query-gpu=timestamp,index,uuid,pci.bus_id,memory.used,memory.total,utilization.gpu --format=csv -lms 500 > nvidia_smi_query_loop.csv 2>&1 &
Q=$!
sleep 1
timeout 120 bash -c "echo \$\$ > $G/train-job/cgroup.procs; exec python3 $S/train_loader_oom.py" > train.log 2>&1; echo "exit code $?" >> train.log
sleep 1; kill $Q
dmesg --time-format iso > dmesg_iso.txt 2>&1; dmesg > dmesg.txt 2>&1; cat $G/train-job/memory.events > memory_events.txt
tar czf ${OUT:-/tmp}/cap4.tar.gz -C /tmp cap4; ls -la $C; tail -25 train.log; grep -n "Killed process\|invoked oom" dmesg_iso.txt | tail -5
