#!/usr/bin/env bash
# The checks kiln owes a lent GPU machine (docs/gpu.md), so that its 30 minutes go to running them, not typing them.
#
# Here (no GPU needed):
#   tools/gpu/gpu_checks.sh prepare BUILD    a -DKILN_ORT_GPU=ON build folder -> BUILD/gpu-check/ (the test video, the
#                                            predecessor's gpu_config.yaml) and BUILD/gpu-bundle.part-* + BUILD/gpu-run
#                                            (../shared/tools/gpu-bundle with ONNX Runtime's providers, the models and
#                                            the photographs the tests and benches read)
# There, each under 10 minutes, after the parts were carried one per call (command `true`), back to back:
#   bash BUILD/gpu-run bash tools/gpu/gpu_checks.sh suite BUILD   every test binary with KILN_REQUIRE_GPU=1 (a GPU
#                                            skip fails), 4 at a time; compute-sanitizer over the matte, segment
#                                            and device-staged inference tests
#   bash BUILD/gpu-run bash tools/gpu/gpu_checks.sh infer BUILD   kiln infer on the GPU (where its model input lay),
#                                            kiln bench infer (CUDA vs CPU provider, every packaged model), infer_peers
#                                            on the CUDA provider (the >= 85 % of model-only target)
#   bash BUILD/gpu-run bash tools/gpu/gpu_checks.sh segment BUILD kiln bench ops, kiln segment CPU vs GPU (both
#                                            pipelines, the seed's targets, IoU against the CPU's masks), NVDEC,
#                                            kiln bench segment
# Results: /tmp/gpu-logs/checks/ (gpu-run packs /tmp/gpu-logs into $OUT/gpu-logs.tgz), summary.txt first.
set -u
phase=${1:?usage: gpu_checks.sh prepare|suite|infer|segment BUILD}
B=$(cd "${2:-build}" && pwd)
S=$(cd "$(dirname "$0")/../.." && pwd)
C=$B/gpu-check
PHOTOS="/usr/lib/python3/dist-packages/skimage/data/astronaut.png /usr/lib/python3/dist-packages/skimage/data/camera.png
/usr/lib/python3/dist-packages/skimage/data/coffee.png /usr/lib/python3/dist-packages/skimage/data/rocket.jpg
/usr/share/matplotlib/mpl-data/sample_data/grace_hopper.jpg"
CACHE=$(sed -n 's/^KILN_CACHE:PATH=//p' "$B/CMakeCache.txt" 2>/dev/null)
CACHE=${CACHE:-${KILN_CACHE:-$HOME/.cache/kiln}}
MODELS=${KILN_MODELS:-$CACHE/models}

if [[ $phase == prepare ]]; then
  grep -q '^KILN_ORT_GPU:BOOL=ON' "$B/CMakeCache.txt" ||
    { echo "gpu_checks: $B is not configured with -DKILN_ORT_GPU=ON (docs/gpu.md)" >&2; exit 2; }
  mkdir -p "$C"
  /usr/bin/python3 "$S/tools/video/make_person_video.py" -o "$C/person.mp4" > "$C/person.json" || exit 2
  cp "$S/tests/cli/data/gpu_config.yaml" "$C/gpu_config.yaml"
  # There gpu-run loads ONNX Runtime's core from BUILD/gpulib (LD_LIBRARY_PATH wins over the executables' RUNPATH),
  # and the core loads its providers from its own folder: they go beside it (gpu-bundle ships BUILD's *.so files).
  mkdir -p "$B/gpulib"
  cp -L "$CACHE"/onnxruntime-gpu-providers/lib/*.so "$B/gpulib/" || exit 2
  # Parts of 58 MiB: the last call carries one with gpu-run and the working tree (about 5 MiB) under 64 MiB.
  export GPU_BUNDLE_PART_MIB=${GPU_BUNDLE_PART_MIB:-58}
  GPU_BUNDLE_EXTRA="$MODELS $C $PHOTOS" "$S/../shared/tools/gpu-bundle" "$B"
  exit $?
fi

L=/tmp/gpu-logs/checks
mkdir -p "$L"
export KILN_MODELS=$MODELS
failed=0
# step NAME SECONDS COMMAND...: runs it with a time limit, its output in $L/NAME.log, one summary line.
step() {
  local name=$1 limit=$2 start rc
  shift 2
  start=$(date +%s)
  timeout "$limit" "$@" > "$L/$name.log" 2>&1
  rc=$?
  [[ $rc -ne 0 ]] && failed=1
  printf '%-34s rc=%-3s %4ss  %s\n' "$name" "$rc" "$(($(date +%s) - start))" \
    "$(tail -n 1 "$L/$name.log" | cut -c1-120)" | tee -a "$L/summary.txt"
}

case $phase in
  suite)
    export KILN_REQUIRE_GPU=1
    run_one='timeout 400 "$1" > "$2/$(basename "$1").log" 2>&1; echo "$(basename "$1") rc=$?"'
    find "$B/tests" -maxdepth 1 -type f -perm -u+x -name 'kiln_tests*' | sort |
      xargs -P 4 -I{} sh -c "$run_one" _ {} "$L" | sort | tee -a "$L/summary.txt"
    grep -hE '^\[  (FAILED|SKIPPED) ' "$L"/kiln_tests*.log | sort -u | head -60 | tee -a "$L/summary.txt"
    grep -q 'rc=[1-9]' "$L/summary.txt" && failed=1
    sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
    # The kernels new since the last sanitizer-clean GPU run (the matte), and the segment engine's CUDA path.
    step sanitizer_matte 150 "$sanitizer" --tool memcheck --error-exitcode 3 "$B/tests/kiln_tests_backend_ops_matte"
    step sanitizer_segment 200 "$sanitizer" --tool memcheck --error-exitcode 3 "$B/tests/kiln_tests_apps_segment"
    # The model's input preprocessed into device memory that ONNX Runtime reads in place, on kiln's stream.
    step sanitizer_staged 200 "$sanitizer" --tool memcheck --error-exitcode 3 "$B/tests/kiln_tests_infer" \
      --gtest_filter='StagedOnCuda*:InferOnCuda*'
    ;;
  infer)
    K=$B/kiln
    step devices 60 "$K" devices --json
    # The summary's "model input: device (N runs)" says the preprocess's output reached the model without the host.
    # shellcheck disable=SC2086
    step infer_cli_gpu 120 "$K" infer --model fr-embed $PHOTOS -o "$L/embeddings.npy" --mode gpu --threads 16
    for m in fr-embed fr-detect selfie blazeface-front; do
      step "bench_infer_$m" 120 "$K" bench infer --model "$m" --batch-sizes 1,8,32 --threads 16 --json
    done
    step infer_peers_gpu 420 "$B/bench/infer_peers" --mode gpu --no-peers --models fr-embed,selfie \
      --batch-sizes 1,8,32 --images 4096 --threads 16 --repeats 3 --json "$L/infer_peers_gpu.json"
    ;;
  segment)
    K=$B/kiln
    step bench_ops 300 "$K" bench ops --ops fused_preprocess,resize_bilinear,matte,mask --batch-sizes 1,8,32 --json
    # The CPU's masks (lossless) are the reference the GPU runs' masks are compared with (IoU in their summaries);
    # --config brings the predecessor's targets (50 ms end to end, 60 / 90 frames/s); --provider cuda overrides its
    # TensorRT fp16 (not on the machine), latency runs its batching (8 frames, 50 ms) with the latency pipeline's own.
    step segment_cpu_reference 120 "$K" segment "$C/person.mp4" -o "$L/reference.mkv" --mode cpu --hw-decode none \
      --codec ffv1 -q
    for mode in gpu cpu; do
      decode=$([[ $mode == gpu ]] && echo auto || echo none)  # the GPU runs decode on NVDEC where it starts
      step "segment_${mode}_throughput" 120 "$K" --trace "$L/segment_${mode}_throughput.trace.json" segment \
        "$C/person.mp4" -o "$L/segment_${mode}_throughput.mp4" --mode "$mode" --hw-decode "$decode" --throughput \
        --threads 16 --config "$C/gpu_config.yaml" --provider cuda --reference "$L/reference.mkv"
      step "segment_${mode}_latency" 120 "$K" --trace "$L/segment_${mode}_latency.trace.json" segment \
        "$C/person.mp4" -o "$L/segment_${mode}_latency.mp4" --mode "$mode" --hw-decode "$decode" --latency \
        --batch-size 1 --max-delay-us 0 --threads 16 --config "$C/gpu_config.yaml" --provider cuda \
        --reference "$L/reference.mkv"
    done
    ls -l /usr/lib/x86_64-linux-gnu/libnvcuvid.so* > "$L/nvdec_library.log" 2>&1  # NVDEC needs the driver's libnvcuvid
    step segment_gpu_nvdec 120 "$K" segment "$C/person.mp4" -o "$L/segment_nvdec.mp4" --mode gpu --hw-decode cuda \
      --threads 16 --reference "$L/reference.mkv"
    step bench_segment 300 "$K" bench segment --video "$C/person.mp4" --threads 16 --json
    rm -f "$L"/*.mp4 "$L"/*.mkv
    ;;
  *) echo "gpu_checks: unknown phase $phase (prepare, suite, infer or segment)" >&2; exit 2 ;;
esac
exit $failed
