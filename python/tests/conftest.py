"""pytest setup: the package from this checkout (python/), libtilec.so from $TILEC_LIBRARY (ctest sets
it to the build's), the fake driver from $TILEC_FAKE_LIBCUDA (tests/fakecuda; the fake-driver tests
skip without it)."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
EXAMPLES = os.path.join(ROOT, "examples")
