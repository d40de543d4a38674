#!/bin/bash
# Real logs of the two failures that need NCCL or a full trainer: a collective timeout and a Trainer's OOM in evaluation.
S=$(dirname "$(realpath "$0")"); C=/tmp/cap3; mkdir -p $C; cd $C
NCCL_DEBUG=WARN timeout 100 torchrun --nproc_per_node=2 $S/nccl_timeout.py > nccl_watchdog_timeout.log 2>&1; echo "exit code $?" >> nccl_watchdog_timeout.log
timeout 150 python3 $S/hf_trainer_oom.py > hf_trainer_eval_oom.log 2>&1; echo "exit code $?" >> hf_trainer_eval_oom.log
tar czf ${OUT:-/tmp}/cap3.tar.gz -C /tmp cap3; ls -la $C; grep -v "^ *File\|^  " nccl_watchdog_timeout.log | tail -25
