"""expect_exit.py CODE CMD...: run CMD (stdout/stderr passed through) and
exit 0 when it exited with exactly CODE, 1 otherwise (signals never pass)."""
import subprocess
import sys

want = int(sys.argv[1])
rc = subprocess.call(sys.argv[2:])
if rc != want:
    how = "signal %d" % -rc if rc < 0 else "exit %d" % rc
    sys.stderr.write("expect_exit: wanted exit %d, got %s: %s\n" % (want, how, " ".join(sys.argv[2:])))
    sys.exit(1)
