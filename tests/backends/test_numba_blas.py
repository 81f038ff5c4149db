"""Mode numba's private OpenBLAS (symscan/backends/numba/blas.py) follows the user's settings:
``SYMSCAN_PRIVATE_BLAS=0`` turns it off, and a set ``OPENBLAS_CORETYPE`` is never overridden.
The choice is made once per process, so each case runs in a child process; the child sees the
copy's load (``ctypes.CDLL`` in blas.py) and refuses it, so that no kernel runs that the CPU
may lack, and it takes the CPU as one where the copy is worth loading (``_worth_it``)."""

import json
import os
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("numba")
pytest.importorskip("scipy")

SEEN_LOADS = """
    import ctypes, json, os, types
    from symscan.backends.numba import blas

    loads = []  # OPENBLAS_CORETYPE at each attempt to load the private copy


    def refuse_copy(name, *args, **kwargs):
        if "symscan_openblas" in str(name):
            loads.append(os.environ.get("OPENBLAS_CORETYPE"))
            raise OSError("the private copy is not loaded in this test")
        return ctypes.CDLL(name, *args, **kwargs)


    blas.ctypes = types.SimpleNamespace(**{**vars(ctypes), "CDLL": refuse_copy})
    blas._worth_it = lambda path: True
    copy_written = lambda: any(blas.cache_dir().glob("libsymscan_openblas*"))
"""


def _child(tmp_path, code: str, **env: str | None) -> dict:
    """Run ``SEEN_LOADS`` then ``code`` (which prints one JSON line) with ``env`` changed for
    the child only (None removes a variable)."""
    child_env = dict(os.environ, SYMSCAN_CACHE_DIR=str(tmp_path))
    for name, value in env.items():
        if value is None:
            child_env.pop(name, None)
        else:
            child_env[name] = value
    source = textwrap.dedent(SEEN_LOADS) + textwrap.dedent(code)
    root = os.path.dirname(os.path.dirname(os.path.dirname(__file__)))
    result = subprocess.run([sys.executable, "-c", source], env=child_env, capture_output=True, text=True, cwd=root)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_kernels_with_the_private_blas_off_match_mode_py(tmp_path):
    """An RNN with a matrix product in its loop and one after it, in kernels, with
    SYMSCAN_PRIVATE_BLAS=0: numba's np.dot, mode py's numbers, no copy written or loaded."""
    found = _child(tmp_path, """
        import numpy as np, symscan as ss, symscan.tensor as T
        X, W, h0 = T.tensor3("X"), T.matrix("W"), T.matrix("h0")
        hs, _ = ss.scan(lambda x, h, W: T.tanh(T.dot(h, W) + x), sequences=X, outputs_info=h0, non_sequences=W)
        outputs = [hs, T.dot(hs[-1], W)]
        rng = np.random.default_rng(3)
        values = [rng.normal(size=(12, 4, 6)), rng.normal(size=(6, 6)) / 3, np.zeros((4, 6))]
        f = ss.function([X, W, h0], outputs, mode="numba", rewrites=["-push_out_seq", "-scan_to_accumulate"])
        got, want = f(*values), ss.function([X, W, h0], outputs, mode="py")(*values)
        print(json.dumps({"config": ss.config.numba_private_blas, "report": f.backend_report(),
                          "agree": all(np.allclose(g, w, rtol=1e-12, atol=1e-12) for g, w in zip(got, want)),
                          "loads": loads, "copy_written": copy_written(), "refusal": blas.refusal()}))
    """, SYMSCAN_PRIVATE_BLAS="0")
    assert found["config"] is False and found["refusal"] == "config.numba_private_blas is off"
    assert found["report"] == ["scan: numba"]
    assert found["agree"]
    assert found["loads"] == [] and not found["copy_written"]


@pytest.mark.parametrize("coretype", [os.environ.get("OPENBLAS_CORETYPE") or "Haswell", None])
def test_a_set_openblas_coretype_is_not_overridden(tmp_path, coretype):
    """With OPENBLAS_CORETYPE set, the copy is neither written nor loaded and the variable is
    left as it was; without it (the control) the copy loads with SkylakeX. Only the decision
    runs: no BLAS product in the child, whatever the coretype."""
    found = _child(tmp_path, """
        helper = blas.matmul_helper("float64")
        print(json.dumps({"helper": helper is not None, "loads": loads, "copy_written": copy_written(),
                          "coretype": os.environ.get("OPENBLAS_CORETYPE")}))
    """, OPENBLAS_CORETYPE=coretype)
    assert found["coretype"] == coretype and not found["helper"]
    if coretype is None:
        assert found["loads"] == ["SkylakeX"] and found["copy_written"]
    else:
        assert found["loads"] == [] and not found["copy_written"]
