"""A kernel's precision test as its repository would hold it (docs/ci.md): the pytest plugin's
three lines. `my_kernel` stands for your kernel; here vlastab's example chunked Gated DeltaNet
(chunk 64, bf16 inputs, float32 inside), judged forward and backward against the exact
reference. Run with: python -m pytest -p vlastab.pytest_plugin --vlastab-keep DIR THIS_FILE"""
import pytest
import torch

from vlastab.examples import gdn_chunk as my_kernel


@pytest.mark.vlastab(model="gdn", dtype=torch.bfloat16, form="chunk:64")
def test_my_kernel(vlastab_judge, vlastab_inputs):
    vlastab_judge(my_kernel, **vlastab_inputs(T=256, H=2, d=32))
