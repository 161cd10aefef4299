#!/usr/bin/env bash
# Breakout on a GPU machine that reaches no package index and has its own Python 3.12 with torch
# (a lent H100/H200): build everything here, carry it, run one command there.
#
#   bash benchmarks/offline_gpu.sh prepare [PL3_DIR]   # here, in the repo root: .whl/ (ours as
#        wheels, puffer-ocean and puffer-kernels as sdists built there, their third-party wheels at
#        uv.lock's versions) and, given the folder that ../shared/anchors/pl3/setup.sh built,
#        .pl3gpu/ through ../shared/anchors/pl3/gpu/prepare.sh; both ignored through
#        .git/info/exclude
#   OUT=DIR bash benchmarks/offline_gpu.sh run [JOB...]  # there, with .whl and .pl3gpu carried
#
# `run` builds ours (the CUDA kernels included) and PufferLib side by side, runs the CUDA tests
# (kernels, graphs of the rollout and the update, flat buffers, bfloat16), then each JOB while
# time is left before END (epoch seconds; default now + 560): ROW:SEED of
# benchmarks/pufferlib4_learn.py on cuda (pufferlib4: the shipped PufferNet config; graphed:
# the same with `train.update_graph`; pufferlib3: PufferLib 3.0's LSTM config on ours; pl3:
# PufferLib 3.0's own trainer), or `profile` (benchmarks/profile_train.py's phases at both
# configs). The default order puts issue 59's acceptance rows first. Curves go to /tmp/learn,
# packed into $OUT/learn.tar after each job with the table (`--report`) in $OUT/report.md; logs
# to $OUT.
# On an H200 (2026-11-29): builds ~110 s, tests 30 s, ~80-105 s a breakout run at 1.3M steps/s.
set -u
case "${1:-}" in
prepare)
  mkdir -p .git/info
  for d in /.whl/ /.pl3gpu/; do grep -qx "$d" .git/info/exclude 2>/dev/null || echo "$d" >> .git/info/exclude; done
  rm -rf .whl && mkdir .whl
  for p in puffer-core puffer-envs puffer-sweep puffer-train puffer-vector puffer-view puffer-cli; do
    uv build -q --package $p --wheel -o .whl; done
  for p in puffer-ocean puffer-kernels; do uv build -q --package $p --sdist -o .whl; done
  pins=$(python3 - <<'PY'
import tomllib
lock = {p["name"]: p["version"] for p in tomllib.load(open("uv.lock", "rb"))["package"]}
names = ("gymnasium farama-notifications tomli-w typer rich pydantic pydantic-core "
         "typing-inspection annotated-types annotated-doc")
print(" ".join(f"{n}=={lock[n]}" for n in names.split()))
PY
)
  python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
    -d .whl $pins
  [ -n "${2:-}" ] && bash "$(dirname "$0")/../../shared/anchors/pl3/gpu/prepare.sh" "$2" breakout
  du -sh .whl .pl3gpu 2>/dev/null; exit 0 ;;
run) shift ;;
*) echo "usage: offline_gpu.sh prepare [PL3_DIR] | run [ROW:SEED...]" >&2; exit 2 ;;
esac
: "${OUT:?set OUT to the folder for logs and curves}"; PY=${PY:-python3}
END=${END:-$(( $(date +%s) + 560 ))}; JOBS=${*:-pufferlib4:0 graphed:0 pl3:0 pufferlib3:0 profile pufferlib4:1 pufferlib4:2}
export PYTHONUNBUFFERED=1 OMP_NUM_THREADS=1
T0=$(date +%s); t(){ echo "[$(( $(date +%s) - T0 )) s] $*"; }
exec > >(tee -a "$OUT/main.log") 2>&1
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
( export MAX_JOBS=8 TORCH_CUDA_ARCH_LIST=9.0
  $PY -m pip install -q --no-index --no-deps --no-compile --target /tmp/pl3site .pl3gpu/whl/*.whl &&
  cd .pl3gpu/src && $PY -m pip install -q --no-index --no-deps --no-build-isolation --target /tmp/pl3site .
) > "$OUT/build_pl3.log" 2>&1 &
built=$!
# ocean_learn.py takes a venv: this one's python is the machine's with PufferLib's folder first.
mkdir -p /tmp/pl3venv/bin
printf '#!/bin/sh\nPYTHONPATH=/tmp/pl3site exec %s "$@"\n' "$(command -v $PY)" > /tmp/pl3venv/bin/python
chmod +x /tmp/pl3venv/bin/python
# One pip call: a second --target install over the shared puffer/ namespace folder is skipped.
CMAKE_BUILD_PARALLEL_LEVEL=8 $PY -m pip install -q --no-index --no-deps --no-build-isolation \
  --target /tmp/site .whl/*.whl .whl/*.tar.gz > "$OUT/build_ours.log" 2>&1
t "ours built, rc $?"
export PYTHONPATH=/tmp/site
# Not xdist (pytest-benchmark's warning under it is an error here), not the pettingzoo tests.
timeout 150 $PY -m pytest -q -o addopts="" --import-mode=importlib -p no:cacheprovider -p no:xdist -rs \
  kernels/tests packages/puffer-train/tests/test_train_{graphs,update_graph,env_buffers,kernels,policies,rollout,microbatch,diverged,flat,bf16,precision}.py \
  > "$OUT/tests.log" 2>&1
t "CUDA tests rc $?: $(tail -1 "$OUT/tests.log")"
wait $built; t "PufferLib built, rc $?"
for job in $JOBS; do
  left=$(( END - $(date +%s) - 5 ))
  [ $left -lt 30 ] && { t "no time left for $job"; break; }
  if [ "$job" = profile ]; then
    timeout $left $PY benchmarks/profile_train.py breakout --rows shipped pufferlib3 --device cuda \
      --threads 1 --warmup 2 --epochs 4 --repeats 1 > "$OUT/profile.log" 2>&1
    t "profile rc $?"; continue
  fi
  timeout $left $PY benchmarks/pufferlib4_learn.py breakout --rows ${job%:*} --seeds ${job#*:} \
    --threads 1 --device cuda --pufferlib /tmp/pl3venv --out /tmp/learn 2>&1 | grep -v "^  pufferlib"
  t "$job rc ${PIPESTATUS[0]}"
  $PY benchmarks/pufferlib4_learn.py breakout --seeds 0 1 2 --out /tmp/learn --report > "$OUT/report.md"
  tar cf "$OUT/learn.tar" -C /tmp learn
done
