"""A CUDA kernel that writes through a wild pointer (the driver reports an Xid) and one that traps."""
import sys

import cupy

kind = sys.argv[1]
source = {
    "wild": r'extern "C" __global__ void k(int* p) { *(int*)(0xdead0000ULL + threadIdx.x * 4096) = 1; }',
    "trap": r'extern "C" __global__ void k(int* p) { if (threadIdx.x == 7) __trap(); p[threadIdx.x] = 1; }',
}[kind]
buffer = cupy.zeros(256, dtype=cupy.int32)
cupy.RawKernel(source, "k")((1,), (256,), (buffer,))
cupy.cuda.runtime.deviceSynchronize()
print("kernel finished", buffer.sum())
