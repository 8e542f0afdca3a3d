/* kern.cu: one policy's GPU kernel (kpolicy.h, POL given by the build: -DPOL=f16f32), compiled
 * by nvcc once per row of VLA_PRECS (the Makefile), so that the policies compile in parallel and
 * a change to the CUDA runtime calls (vlacuda.cu) compiles none of them. */
#include "kdev.h"

#define KSYNC() __syncthreads()
#define KTID ((int)threadIdx.x)
#define KNT ((int)blockDim.x)
#include "kpolicy.h"
