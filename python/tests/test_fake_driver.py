"""Launches through the package on the fake driver (tests/fakecuda, $TILEC_FAKE_LIBCUDA), in a
subprocess so this process keeps the real driver for the GPU tests; and the CPU cost per launch."""
import os
import subprocess
import sys

import pytest

FAKE = os.environ.get("TILEC_FAKE_LIBCUDA", "")
HERE = os.path.dirname(os.path.abspath(__file__))
needs_fake = pytest.mark.skipif(not os.path.exists(FAKE), reason="no fake libcuda ($TILEC_FAKE_LIBCUDA)")


def run(*args, env=None):
    env = dict(os.environ, TILEC_LIBCUDA=FAKE, **(env or {}))
    env["TILEC_CACHE_DIR"] = env.get("TILEC_FAKE_CACHE_DIR", "")  # empty: no disk cache
    r = subprocess.run([sys.executable, os.path.join(HERE, "fake_launch.py"), *args], env=env,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout


@needs_fake
def test_launches_as_recorded_by_the_driver():
    assert "fake-driver checks: OK" in run()


@needs_fake
def test_autotune_zeroes_zeroed_tensors_before_every_launch(tmp_path):
    log = tmp_path / "fake.log"
    env_log = {"FAKE_CUDA_LOG": str(log)}
    assert "autotune zeroed checks: OK" in run("--autotune-zeroed", str(log), env=env_log)


@needs_fake
def test_pitch_repack_through_the_package(tmp_path):
    log = tmp_path / "fake.log"
    env = {"FAKE_CUDA_LOG": str(log), "TILEC_PITCH_REPACK": "1"}
    assert "pitch repack checks: OK" in run("--pitch-repack", str(log), env=env)


@needs_fake
def test_launch_cost():
    out = run("--bench", "20000")
    print(out)
    us = float(out.split("us per call")[0].split(":")[-1])
    # The generic DLPack path (each producer's __dlpack__, the capsule read through ctypes) costs
    # ~5 us a tensor on an idle machine (~25 us a call); torch tensors take the fast path
    # (measured on the GPU machine, docs/python.md).  Only a guard against gross regressions:
    # CI runs it beside other tests, under ASan (python3 with the ASan runtime preloaded).
    assert us < 150, out


@needs_fake
@pytest.mark.parametrize("how", ["ctypes-attrs", "ctypes-exchange"])
def test_fast_path_launches_as_the_generic_path(how):
    assert f"fast-path checks ({how}): OK" in run("--fast", how)


@needs_fake
def test_ffi_entry_point_abi():
    assert "ffi ABI checks: OK" in run("--ffi-abi")


@needs_fake
def test_tvm_ffi_launches_as_the_generic_path():
    pytest.importorskip("tvm_ffi")
    assert "tvm-ffi checks: OK" in run("--tvm-ffi")


@needs_fake
def test_fast_path_launch_cost():
    out = run("--bench-torch", "20000")
    print(out)
    generic, fast = (float(x.split(" us")[0].split()[-1]) for x in out.split(":")[-1].split(","))
    # Fake torch tensors (Python attributes, slower than torch's): only a gross-regression guard
    # (ASan, a loaded machine); the H200 numbers are in bench/RESULTS.md.
    assert fast < 150, out
