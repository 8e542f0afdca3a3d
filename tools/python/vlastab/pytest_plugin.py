"""pytest plugin: a kernel's test in three lines. Load it with `-p vlastab.pytest_plugin` on
pytest's command line, or `pytest_plugins = ["vlastab.pytest_plugin"]` in your conftest.py:

    @pytest.mark.vlastab(model="gdn", dtype=torch.bfloat16, form="chunk:64")
    def test_my_kernel(vlastab_judge, vlastab_inputs):
        vlastab_judge(my_kernel, **vlastab_inputs(T=256, H=2, d=32))

The marker's keywords are judge()'s (model, dtype, form, precision, settings, grad, logic, slack,
window, ref, ...); a keyword given to the fixture's call wins. A verdict that is not ok fails the
test with the verdict's text (its first line what failed first and why, then its tables);
vlastab_judge returns the Verdict otherwise. `--vlastab-keep DIR` keeps each judgement's trace,
outputs and reports (judge()'s keep=) in DIR/<test name>[-<n>], for a CI job to upload.
"""
import os
import re

import pytest

# the marker's keywords that are vlastab_inputs' rather than judge()'s
_INPUT_KEYS = ("seed",)


def pytest_addoption(parser):
    parser.addoption("--vlastab-keep", metavar="DIR", default=None,
                     help="keep each vlastab judgement's trace, outputs and reports in "
                          "DIR/<test name> (judge()'s keep=)")


def _keep_dir(request, n):
    """DIR/<test name>[-n] of --vlastab-keep, or None"""
    root = request.config.getoption("--vlastab-keep")
    if root is None:
        return None
    name = re.sub(r"[^A-Za-z0-9_.-]+", "_", request.node.name).strip("._") or "test"
    return os.path.join(root, name + ("-%d" % n if n else ""))


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "vlastab(**kw): judge()'s keywords for the vlastab_judge fixture (model, dtype, "
        "form, precision, settings, grad, logic, slack, window, ref) and vlastab_inputs' model "
        "and seed")


def _marker(request):
    m = request.node.get_closest_marker("vlastab")
    return dict(m.kwargs) if m else {}


@pytest.fixture
def vlastab_judge(request):
    """fn, q, k, v, **kw -> the Verdict of vlastab.judge(fn, q, k, v, **(marker's keywords | kw));
    the test fails, with the verdict's text, when it is not ok"""
    defaults = {k: v for k, v in _marker(request).items() if k not in _INPUT_KEYS}

    calls = [0]

    def judge(fn, q, k, v, **kw):
        import vlastab
        args = dict(defaults)
        keep = _keep_dir(request, calls[0])
        calls[0] += 1
        if keep is not None:
            args["keep"] = keep
        args.update(kw)
        verdict = vlastab.judge(fn, q, k, v, **args)
        if not verdict.ok:
            pytest.fail(str(verdict), pytrace=False)
        return verdict

    return judge


@pytest.fixture
def vlastab_inputs(request):
    """(B=1, T=256, H=2, d=32, dv=None, seed=marker's or 0) -> a dict q, k, v and the inputs the
    marker's model (default gdn) reads of g, beta, u, decay (the library's model table), drawn as
    docs/kernel.md draws them: q, k, v standard normals in fla's layout (B, T, H, d), beta =
    sigmoid(N(0, 1)), g = -0.1 softplus(N(0, 1)) per head and token (kda, gla: per key channel
    too), u (B, T, H, d) and decay (B, T, H) sigmoid(N(0, 1))"""
    mk = _marker(request)

    def inputs(B=1, T=256, H=2, d=32, dv=None, seed=None):
        import torch
        from .verdict import _model_table
        model = mk.get("model", "gdn")
        reads, gate, _ = _model_table()[model]
        gen = torch.Generator().manual_seed(mk.get("seed", 0) if seed is None else seed)
        dv = d if dv is None else dv
        x = {"q": torch.randn(B, T, H, d, generator=gen), "k": torch.randn(B, T, H, d, generator=gen),
             "v": torch.randn(B, T, H, dv, generator=gen)}
        if "beta" in reads:
            x["beta"] = torch.randn(B, T, H, generator=gen).sigmoid()
        if "g" in reads:
            shape = (B, T, H, d) if gate == 2 else (B, T, H)
            x["g"] = -0.1 * torch.nn.functional.softplus(torch.randn(*shape, generator=gen))
        if "u" in reads:
            x["u"] = torch.randn(B, T, H, d, generator=gen).sigmoid()
        if "decay" in reads:
            x["decay"] = torch.randn(B, T, H, generator=gen).sigmoid()
        return x

    return inputs
