"""A Hugging Face Trainer run that trains a few steps, then runs out of GPU memory in evaluation."""
import sys

import torch
from transformers import GPT2Config, GPT2LMHeadModel, Trainer, TrainingArguments

seq, eval_batch = 512, int(sys.argv[1]) if len(sys.argv) > 1 else 4096


class Tokens(torch.utils.data.Dataset):
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        ids = torch.randint(0, 50257, (seq,), generator=torch.Generator().manual_seed(i))
        return {"input_ids": ids, "labels": ids}


model = GPT2LMHeadModel(GPT2Config(n_layer=2, n_head=4, n_embd=256, n_positions=seq))
args = TrainingArguments(output_dir="/tmp/hf-out", per_device_train_batch_size=8, per_device_eval_batch_size=eval_batch,
                         max_steps=20, logging_steps=5, eval_strategy="steps", eval_steps=20, save_strategy="no",
                         report_to="none", disable_tqdm=False)
Trainer(model=model, args=args, train_dataset=Tokens(400), eval_dataset=Tokens(eval_batch)).train()
