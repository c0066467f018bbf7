"""run_tp_linear.py ROOT -- examples/tp_linear.py as a test (gpu.python_tp_linear): started by
torch.distributed.run with one process per visible GPU (at most 8; one GPU runs TP 1, the same
code), --check on a smaller block (hidden 2048, intermediate 4096, M 1, 7 and 64), and it must
exit 0 having printed one passing check line per M (rank 0's comparison with the unsplit
block). Exits 77 (skipped) without PyTorch, a CUDA GPU or NCCL.
Run: MGEN_LIBRARY=build/runtime/libmgen.so python3 tests/python/run_tp_linear.py ROOT"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpu_env  # noqa: E402

torch = gpu_env.require()
import torch.distributed as dist  # noqa: E402

if not dist.is_available() or not dist.is_nccl_available():
    gpu_env.skip("this PyTorch has no NCCL")

MS = (1, 7, 64)
gpus = min(torch.cuda.device_count(), 8)
cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc-per-node={gpus}",
       os.path.join(sys.argv[1], "examples", "tp_linear.py"), "--check", "--hidden", "2048",
       "--inter", "4096", "--tokens", ",".join(map(str, MS)), "--reps", "5"]
print(" ".join(cmd), flush=True)
r = subprocess.run(cmd, capture_output=True, text=True, timeout=500)
print(r.stdout[-6000:])
print(r.stderr[-4000:], file=sys.stderr)
passed = re.findall(rf"^check M=(\d+): TP{gpus} against the unsplit block: .* ok$", r.stdout, re.M)
failures = []
if r.returncode != 0:
    failures.append(f"exit status {r.returncode}")
if sorted(map(int, passed)) != sorted(MS):
    failures.append(f"passing check lines for M {sorted(map(int, passed))}, expected {list(MS)}")
if not re.search(rf"^TP {gpus}, hidden 2048", r.stdout, re.M):
    failures.append("no timing table")
if failures:
    print("run_tp_linear: FAIL: " + "; ".join(failures))
    sys.exit(1)
print(f"run_tp_linear: TP {gpus}: every check passed")
