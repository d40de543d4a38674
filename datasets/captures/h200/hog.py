"""Touch memory 64 MiB at a time until the kernel's OOM killer ends this process."""
import sys
import time

held = []
for step in range(64):
    held.append(bytearray(64 * 2**20))
    print(f"step {step}: holding {(step + 1) * 64} MiB", flush=True)
    time.sleep(0.05)
sys.exit("never got killed")
