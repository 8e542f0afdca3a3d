"""The pytest plugin's examples (docs/kernel.md): a kernel's test in three lines, for the three
example kernels of vlastab/examples.py. The correct one passes; the two with the faults of fla
issues 1240 and 736 fail, and their tests say so by expecting the failure and its words in the
message (the verdict's text). Run by tests/test_python.c:
    python3 -m pytest -p vlastab.pytest_plugin tools/python/test_pytest_examples.py
(with tools/python on PYTHONPATH and VLA_BIN_DIR the programs' folder)."""
import pytest
import torch

from vlastab.examples import gdn_chunk, gdn_chunk_anchored, gdn_chunk_fp16_ut

SMALL = dict(T=128, H=2, d=16)


@pytest.mark.vlastab(model="gdn", dtype=torch.bfloat16, form="chunk:64")
def test_gdn_chunk(vlastab_judge, vlastab_inputs):
    vlastab_judge(gdn_chunk, **vlastab_inputs(**SMALL))


@pytest.mark.vlastab(model="gdn", dtype=torch.bfloat16, form="chunk:64", grad=False)
def test_gdn_chunk_anchored_fails(vlastab_judge, vlastab_inputs):
    # fla issue 1240's class: every output of a chunk depends on the chunk's last gate
    with pytest.raises(pytest.fail.Exception, match="acausal") as failed:
        vlastab_judge(gdn_chunk_anchored, **vlastab_inputs(**SMALL))
    assert "window_err" in str(failed.value)  # the verdict's table is in the message


@pytest.mark.vlastab(model="gdn", dtype=torch.bfloat16, form="chunk:64", grad=False,
                     settings={"qknorm": False})
def test_gdn_chunk_fp16_ut_fails(vlastab_judge, vlastab_inputs):
    # fla issue 736's class: unnormalized keys overflow the UT transform's float16 K K^T
    x = vlastab_inputs(**SMALL)
    x["k"] = x["k"] * 80  # |k|^2 beyond 65504
    x["beta"] = x["beta"] / (x["k"] * x["k"]).sum(-1)  # beta |k|^2 < 1: a stable recurrence
    with pytest.raises(pytest.fail.Exception, match="non-finite"):
        vlastab_judge(gdn_chunk_fp16_ut, **x)
