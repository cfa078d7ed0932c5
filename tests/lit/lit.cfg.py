# lit configuration: golden diagnostic / IR / pass / PTX tests.
import os
import sys
import lit.formats

config.name = "tilec"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".tile", ".tir", ".test"]
config.excludes = ["Inputs", "lit.cfg.py", "lit.site.cfg.py.in"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.tilec_obj_root, "tests", "lit")

bindir = config.tilec_obj_root
config.substitutions.append(("%tilec", os.path.join(bindir, "tilec")))
config.substitutions.append(("%tile-opt", os.path.join(bindir, "tile-opt")))
config.substitutions.append(("%examples", os.path.join(config.tilec_src_root, "examples")))
# the fake driver (tests/fakecuda): `tilec run --device` on it copies, launches nothing, compares
config.substitutions.append(("%fakecuda", os.path.join(bindir, "tests", "libfakecuda.so")))
config.substitutions.append(("FileCheck", config.filecheck))
config.substitutions.insert(0, ("%python", '"%s"' % sys.executable))  # (before lit's own %p)
config.environment["TILEC_CACHE_DIR"] = os.path.join(config.test_exec_root, "cache")
if config.ptxas:
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", config.ptxas))
if getattr(config, "nvdisasm", ""):
    config.available_features.add("nvdisasm")
    config.substitutions.append(("%nvdisasm", config.nvdisasm))
