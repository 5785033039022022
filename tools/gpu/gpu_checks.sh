#!/usr/bin/env bash
# Every check kiln owes a lent GPU machine (docs/gpu.md), in one command that ends by itself, so that the 15 minutes
# of device time go to running them, not typing them.
#
# Here (no GPU needed):
#   tools/gpu/gpu_checks.sh prepare BUILD   a -DKILN_ORT_GPU=ON build folder -> BUILD/gpu-check/ (test videos made from
#                                           real photographs, the predecessor's gpu_config.yaml, an image list) and
#                                           BUILD/gpu-bundle.part-* + BUILD/gpu-run (../shared/tools/gpu-bundle, with
#                                           ONNX Runtime's providers, the models and their npm packages, the fuzz
#                                           corpus and the photographs: every file a test reads)
#   tools/gpu/gpu_checks.sh all BUILD --cpu the same steps with every GPU run made on the CPU (no compute-sanitizer, no
#                                           KILN_REQUIRE_GPU, a few test binaries, the short video): proves the script
# There, after the parts were carried one per call (command `true`), back to back:
#   bash BUILD/gpu-run bash tools/gpu/gpu_checks.sh all BUILD
#       1. proof: every test binary with KILN_REQUIRE_GPU=1; every GPU command in a fresh process (kiln infer, faces,
#          segment throughput / latency / NVDEC, quality, preprocess, each --mode gpu) against the CPU's output,
#          composite and blur of NVDEC's frames blended on the device;
#          compute-sanitizer over the device-input, matte, blur, probability, segment, staging, NVDEC- and encoder-frame
#          tests
#       2. figures: kiln segment GPU vs CPU on 1,800-frame 720p and 1080p videos, kiln bench infer (every packaged
#          model), infer_peers --mode gpu, kiln bench faces, kiln bench segment, kiln bench ops on host and on device
#          batches, render end to end; the encoder kiln segment's auto picked (NVENC or the reason it could not)
#       3. many cores: the CPU jobs at 2 and 16 threads, kiln segment at 2, 4, 8 and 16 with stage times and a trace
#       4. profile: Nsight Compute over the CUDA kernels of kiln bench ops on device batches
#   GPU_CHECKS_SECONDS (default 480) is the deadline for the whole phase: each step's limit is cut to what is left,
#   a step that would start too late is listed as not run, and the logs are packed whatever happens.
# Results: /tmp/gpu-logs/checks/ (summary.txt first: each step, its figures, the targets met or not), packed into
# $OUT/gpu-logs.tgz by gpu-run.
set -u
phase=${1:?usage: gpu_checks.sh prepare|all BUILD [--cpu]}
B=$(cd "${2:-build}" && pwd)
S=$(cd "$(dirname "$0")/../.." && pwd)
C=${GPU_CHECKS_DATA:-$B/gpu-check}  # the videos, config and image list prepare makes
CPU_ONLY=$([[ ${3:-} == --cpu ]] && echo 1 || echo 0)
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
  make_video() {  # NAME SIZE SECONDS_PER_PHOTO: three real photographs, zoomed and panned, H.264 with audio
    [[ -s $C/$1.mp4 ]] && return 0
    /usr/bin/python3 "$S/tools/video/make_person_video.py" -o "$C/$1.mp4" --size "$2" --seconds "$3" > "$C/$1.json"
  }
  # 180 frames for the checks against the CPU, 1,800 (a minute at 30 frames/s) for the figures.
  make_video person 1280x720 2 && make_video person_720p 1280x720 20 && make_video person_1080p 1920x1080 20 || exit 2
  cp "$S/tests/cli/data/gpu_config.yaml" "$C/gpu_config.yaml"
  # 500 images for the many-core runs of kiln infer and faces: the photographs, repeated.
  # shellcheck disable=SC2086
  for _ in $(seq 100); do printf '%s\n' $PHOTOS; done > "$C/photos500.txt"
  # There gpu-run loads ONNX Runtime's core from BUILD/gpulib (LD_LIBRARY_PATH wins over the executables' RUNPATH),
  # and the core loads its providers from its own folder: they go beside it (gpu-bundle ships BUILD's *.so files).
  mkdir -p "$B/gpulib"
  cp -L "$CACHE"/onnxruntime-gpu-providers/lib/*.so "$B/gpulib/" || exit 2
  # What the tests read besides tests/: the models and the npm packages they came from (InferVsOpenCv, the
  # fixed-batch embedder), the fuzz corpus (JobParts, SeriesHdf5Limits), the matplotlib peer script. Not the npm
  # tarballs or ONNX Runtime's own folders (the bundle ships the libraries the executables load).
  # This script and its helpers too: gpu-run runs the command from the build's source path, which there holds only
  # what the bundle brings.
  extra="$C $PHOTOS $S/fuzz/corpus $S/bench/render_matplotlib.py $S/tools/gpu $B/python $S/python/tests"
  extra="$extra $S/tests/common/pytest_require_gpu.py"
  for d in "$CACHE"/*/; do
    case $(basename "$d") in npm | onnxruntime*) ;; *) extra="$extra ${d%/}" ;; esac
  done
  [[ $MODELS == "$CACHE/models" ]] || extra="$extra $MODELS"
  # Parts of 58 MiB: the last call carries one with gpu-run and the working tree (about 5 MiB) under 64 MiB.
  export GPU_BUNDLE_PART_MIB=${GPU_BUNDLE_PART_MIB:-58}
  GPU_BUNDLE_EXTRA="$extra" "$S/../shared/tools/gpu-bundle" "$B" || exit 2
  parts=$(ls "$B"/gpu-bundle.part-* 2> /dev/null | wc -l)
  echo "gpu_checks: $parts parts (at most 6 leave the checks their time)"
  exit 0
fi
[[ $phase == all ]] || { echo "gpu_checks: unknown phase $phase (prepare or all)" >&2; exit 2; }
[[ -s $C/person.mp4 ]] || { echo "gpu_checks: $C has no test videos: run prepare first" >&2; exit 2; }

L=${GPU_CHECKS_LOGS:-/tmp/gpu-logs/checks}
O=$L/out  # outputs compared between runs, removed at the end
rm -rf "$L" && mkdir -p "$L" "$O" "$L/suite"
export KILN_MODELS=$MODELS
K=$B/kiln
T=16  # the lent machine's cores
GPU=gpu
[[ $CPU_ONLY == 1 ]] && GPU=cpu
started=$(date +%s)
DEADLINE=$((started + ${GPU_CHECKS_SECONDS:-480} - 20))  # 20 s kept for the summary and the packing

# The machine's own Python, without the bundle's libraries (gpu-run puts them first on LD_LIBRARY_PATH: a Debian
# libexpat or libz older than the one that python3 was built against would stop it).
py() { env -u LD_LIBRARY_PATH python3 "$@"; }
# The summary and the archive, whatever ends the phase (gpu-run's own deadline sends TERM first).
finish() {
  trap - EXIT TERM INT
  rm -rf "$O"
  py "$S/tools/gpu/checks_summary.py" "$L" "$((DEADLINE + 20 - started))" > "$L/summary.txt" 2>&1 ||
    { echo "(checks_summary.py failed: the step list follows)"; cat "$L/steps.tsv"; } >> "$L/summary.txt"
  cat "$L/summary.txt"
  [[ -n ${OUT:-} ]] && tar czf "$OUT/gpu-logs.tgz" -C "$(dirname "$L")" "$(basename "$L")"
}
trap finish EXIT
# A stop from outside (gpu-run's deadline) ends the running step at once, then the summary is written: each step runs
# in the background and is waited for, since bash runs a trap only after a foreground command returns.
child=0
on_stop() {
  ((child > 0)) && kill -TERM "$child" 2> /dev/null
  exit 143
}
trap on_stop TERM INT

# step NAME LIMIT COMMAND...: runs COMMAND with LIMIT seconds or what is left before the deadline, its output in
# NAME.log; a row in steps.tsv (name, exit code, seconds). 124 = cut by its limit; "not run" when no time was left;
# "refused" (section 4) for a profile ncu refused and ran again.
step() {
  local name=$1 limit=$2 left begin rc
  shift 2
  left=$((DEADLINE - $(date +%s)))
  if ((left < 5)); then
    printf '%s\tnot run\t0\n' "$name" >> "$L/steps.tsv"
    return 1
  fi
  ((limit > left)) && limit=$left
  begin=$(date +%s)
  timeout -k 5 "$limit" "$@" > "$L/$name.log" 2>&1 &
  child=$!
  wait "$child"
  rc=$?
  child=0
  printf '%s\t%s\t%s\n' "$name" "$rc" "$(($(date +%s) - begin))" >> "$L/steps.tsv"
  printf '%-36s rc=%-4s %4ss\n' "$name" "$rc" "$(($(date +%s) - begin))"
  return $rc
}
# compare NAME KIND GPU_OUTPUT CPU_OUTPUT ARGS...: the GPU run's output against the CPU's (compare_outputs.py).
compare() {
  local name=$1 kind=$2
  shift 2
  step "compare_$name" 60 env -u LD_LIBRARY_PATH python3 "$S/tools/gpu/compare_outputs.py" "$kind" "$@"
}

# 1. Proof. The whole C++ suite; on the GPU every skip for want of a GPU fails (KILN_REQUIRE_GPU=1).
suite() {
  local binaries=""
  if [[ $CPU_ONLY == 1 ]]; then
    binaries="$B/tests/kiln_tests_cli $B/tests/kiln_tests_core"
  else
    export KILN_REQUIRE_GPU=1
    binaries=$(find "$B/tests" -maxdepth 1 -type f -perm -u+x -name 'kiln_tests*' | sort)
  fi
  # shellcheck disable=SC2016
  printf '%s\n' $binaries | xargs -P 6 -I{} sh -c \
    'timeout -k 5 "$2" "$1" > "$3/$(basename "$1").log" 2>&1; echo "$(basename "$1") rc=$?"' _ {} "$1" "$L/suite"
}
export -f suite
export B L CPU_ONLY
step suite 150 bash -c 'suite 140'
unset KILN_REQUIRE_GPU
# The Python module's device arrays (DLPack in and out, kiln.preprocess and kiln.quality on CUDA images, a CUDA
# tensor into kiln.Model, CUDA frames into kiln.SegmentPipeline), where the machine's Python can load the module (Debian's Python 3 ABI, numpy, pytest; with
# PyTorch also host and strided CUDA tensors).
python_with_pytest=python3
for p in /usr/bin/python3 python3; do
  "$p" -c 'import numpy, pytest' 2> /dev/null && { python_with_pytest=$p; break; }
done
step python_device 90 env KILN_REQUIRE_GPU=$((1 - CPU_ONLY)) PYTHONPATH="$B/python" "$python_with_pytest" -m pytest \
  -q -p no:cacheprovider "$S/python/tests/test_dlpack.py" \
  "$S/python/tests/test_model.py::test_a_cuda_tensor_is_read_on_the_device_by_the_cuda_provider" \
  "$S/python/tests/test_segment.py::test_cuda_frames_stay_on_the_device_and_give_the_cpu_runs_masks" \
  "$S/python/tests/test_faces.py::test_gpu_stages_match_the_cpu"

# Every GPU command as a user starts it: a new process whose first model session is on the GPU.
# shellcheck disable=SC2086
{
  step infer_gpu 60 "$K" infer --model fr-embed $PHOTOS -o "$O/infer_gpu.npy" --mode $GPU --threads $T
  step infer_cpu 60 "$K" infer --model fr-embed $PHOTOS -o "$O/infer_cpu.npy" --mode cpu --threads $T
  compare infer rows "$O/infer_gpu.npy" "$O/infer_cpu.npy" --width 512
  step infer_selfie_gpu 60 "$K" infer --model selfie $PHOTOS -o "$O/selfie_gpu.npy" --mode $GPU --threads $T
  step infer_selfie_cpu 60 "$K" infer --model selfie $PHOTOS -o "$O/selfie_cpu.npy" --mode cpu --threads $T
  compare infer_selfie values "$O/selfie_gpu.npy" "$O/selfie_cpu.npy" --max-mean-abs 0.01
  step faces_gpu 60 "$K" faces $PHOTOS -o "$O/faces_gpu.h5" --jsonl "$O/faces_gpu.jsonl" --mode $GPU --threads $T -q
  step faces_cpu 60 "$K" faces $PHOTOS -o "$O/faces_cpu.h5" --jsonl "$O/faces_cpu.jsonl" --mode cpu --threads $T -q
  compare faces faces "$O/faces_gpu.jsonl" "$O/faces_cpu.jsonl" --max-px 2
  step quality_gpu 60 "$K" quality $PHOTOS --json "$O/quality_gpu.jsonl" --mode $GPU --threads $T -q
  step quality_cpu 60 "$K" quality $PHOTOS --json "$O/quality_cpu.jsonl" --mode cpu --threads $T -q
  compare quality quality "$O/quality_gpu.jsonl" "$O/quality_cpu.jsonl" --rel 0.001
  step preprocess_gpu 60 "$K" preprocess $PHOTOS -o "$O/pre_gpu.npy" --width 512 --height 512 --letterbox \
    --mode $GPU --threads $T -q
  step preprocess_cpu 60 "$K" preprocess $PHOTOS -o "$O/pre_cpu.npy" --width 512 --height 512 --letterbox \
    --mode cpu --threads $T -q
  compare preprocess values "$O/pre_gpu.npy" "$O/pre_cpu.npy" --max-mean-abs 1e-4 --max-abs 0.02
}
# The CPU's masks (lossless) are the reference of every GPU segment run (IoU in its summary, >= 0.97 expected).
step segment_reference 90 "$K" segment "$C/person.mp4" -o "$O/reference.mkv" --mode cpu --hw-decode none \
  --codec ffv1 --threads $T -q
for pipeline in throughput latency; do
  step "segment_gpu_$pipeline" 90 "$K" segment "$C/person.mp4" -o "$O/segment_$pipeline.mp4" --mode $GPU \
    --"$pipeline" --threads $T --reference "$O/reference.mkv" -q
done
decode=$([[ $CPU_ONLY == 1 ]] && echo none || echo cuda)  # --hw-decode cuda: NVDEC or an error, never software
ls -l /usr/lib/x86_64-linux-gnu/libnvcuvid.so* > "$L/nvdec_library.log" 2>&1  # NVDEC needs the driver's libnvcuvid
step segment_gpu_nvdec 90 "$K" segment "$C/person.mp4" -o "$O/segment_nvdec.mp4" --mode $GPU --hw-decode $decode \
  --threads $T --reference "$O/reference.mkv" -q
# Composite and blur outputs of NVDEC's frames in a fresh process: blended on the device (the matte op's composite
# over the uploaded background or the blur op's blur of the frame), which the summary counts; the pixels against the
# CPU's are SegmentDeviceFrames' (in the suite).
blended=$([[ $CPU_ONLY == 1 ]] && echo " written, " || echo "composites blended on the device: [1-9]")
for kind in composite blur; do
  step "segment_${kind}_gpu_nvdec" 60 "$K" segment "$C/person.mp4" -o "$O/segment_$kind.mp4" --output "$kind" \
    --mode $GPU --hw-decode $decode --threads $T
  step "segment_${kind}_blended" 5 grep "$blended" "$L/segment_${kind}_gpu_nvdec.log"
done

# compute-sanitizer (memcheck) over the kernels and device paths: the model input written into device memory, the
# matte, blur and probability kernels (device maps smoothed in place), the segment engine on CUDA, host batches through
# the pinned staging slots, NVDEC's frames converted on the device, encoder frames filled on the device.
if [[ $CPU_ONLY == 0 ]]; then
  sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
  memcheck=("$sanitizer" --tool memcheck --error-exitcode 3)
  step sanitizer_staged 60 "${memcheck[@]}" "$B/tests/kiln_tests_infer" --gtest_filter='StagedOnCuda*'
  step sanitizer_matte 40 "${memcheck[@]}" "$B/tests/kiln_tests_backend_ops_matte" --gtest_filter='MatteParity*'
  step sanitizer_blur 40 "${memcheck[@]}" "$B/tests/kiln_tests_backend_ops_blur" --gtest_filter='BlurParity*'
  step sanitizer_probability 40 "${memcheck[@]}" "$B/tests/kiln_tests_backend_ops_probability" \
    --gtest_filter='ProbabilityParity*'
  step sanitizer_segment 60 "${memcheck[@]}" "$B/tests/kiln_tests_apps_segment" --gtest_filter='*OnCuda*'
  step sanitizer_staging 40 "${memcheck[@]}" "$B/tests/kiln_tests_backend_ops" --gtest_filter='CudaStaging*'
  step sanitizer_nvdec 40 "${memcheck[@]}" "$B/tests/kiln_tests_apps_segment" \
    --gtest_filter='NvdecDeviceFrames.Converted*'
  # kiln's kernels writing into FFmpeg's pitched CUDA frames (NVENC's pool; no NVENC needed)
  step sanitizer_encoder_frames 40 "${memcheck[@]}" "$B/tests/kiln_tests_io_video" --gtest_filter='CudaEncoderFrames*'
fi

# 2. Figures. kiln segment on a minute of video, GPU against CPU, warm-up reported apart from the steady rate.
long=$([[ $CPU_ONLY == 1 ]] && echo person || echo person_720p)
for size in 720p 1080p; do
  video=$C/person_$size.mp4
  [[ $CPU_ONLY == 1 ]] && video=$C/person.mp4
  step "segment_${size}_gpu_throughput" 60 "$K" segment "$video" -o "$O/s.mp4" --mode $GPU --throughput \
    --threads $T -q
  step "segment_${size}_cpu_throughput" 60 "$K" segment "$video" -o "$O/s.mp4" --mode cpu --hw-decode none \
    --throughput --threads $T -q
done
# The seed's VR target: p99 <= 50 ms from arrival to encode, frames paced as a camera delivers them.
# The config brings the targets; --provider cuda overrides its TensorRT (not on that machine); the latency pipeline
# keeps its own batching (one frame, no wait) over the config's 8 frames and 50 ms.
step segment_720p_gpu_latency 70 "$K" segment "$C/$long.mp4" -o "$O/s.mp4" --mode $GPU --latency --threads $T \
  --config "$C/gpu_config.yaml" --provider cuda --batch-size 1 --max-delay-us 0 -q
for m in fr-embed fr-detect selfie blazeface-front blazeface-back; do
  step "bench_infer_$m" 30 "$K" bench infer --model "$m" --batch-sizes 1,32 --seconds 1 --threads $T --json
done
images=$([[ $CPU_ONLY == 1 ]] && echo 128 || echo 1024)
step infer_peers 90 "$B/bench/infer_peers" --mode $GPU --no-peers --models fr-embed,selfie --batch-sizes 8,32 \
  --images $images --threads $T --repeats 1 --json "$L/infer_peers.json"
step faces_500_gpu 60 "$K" faces "@$C/photos500.txt" -o "$O/faces500.h5" --mode $GPU --threads $T -q
step bench_faces 60 "$K" bench faces --iterations 3 --threads $T --json "$L/bench_faces.json"
step bench_segment 60 "$K" bench segment --batch-sizes 1 8 --threads $T --json
step bench_ops 60 "$K" bench ops --ops fused_preprocess,resize_bilinear,cvt_gray,quality,matte --sizes large --batch-sizes 32 \
  --iterations 5 --threads $T --json
# Every op on batches already in device memory (as PyTorch and CV-CUDA hold them), each output compared with the CPU's.
step bench_ops_device 90 "$K" bench ops --resident device --sizes large --batch-sizes 32 --iterations 10 --threads $T \
  --json
# The same ops from pinned host batches (a loader that decodes into pinned memory): copies at the bus's speed, each
# row against the upload bound the backend measures.
step bench_ops_pinned 60 "$K" bench ops --resident pinned --ops fused_preprocess,resize_bilinear,cvt_gray,quality,matte \
  --sizes large --batch-sizes 32 --iterations 5 --threads $T --json
for side in gpu cpu; do
  mode=$([[ $side == gpu ]] && echo $GPU || echo cpu)
  step "render_e2e_$side" 60 "$K" render --demo --demo-points 85986 -o "$O/render.h5" --mode "$mode" --threads $T -q
  rm -rf "$O/render.h5" "$O/render.h5.parts"
done

# 3. Many cores: the CPU jobs at 2 and 16 threads on this host; kiln segment at 2, 4, 8 and 16 threads with the
# seed's config (batch 8, 50 ms delay), stage times in each log, a trace at 16.
for threads in 2 $T; do
  step "cores_render_$threads" 60 "$K" render --demo --demo-points 20000 -o "$O/cores.h5" --mode cpu \
    --threads "$threads" -q
  rm -rf "$O/cores.h5" "$O/cores.h5.parts"
  step "cores_infer_$threads" 60 "$K" infer --model fr-embed "@$C/photos500.txt" -o "$O/cores.npy" --mode cpu \
    --threads "$threads"
  step "cores_faces_$threads" 60 "$K" faces "@$C/photos500.txt" -o "$O/cores.h5" --mode cpu --threads "$threads" -q
  rm -f "$O/cores.h5"
done
for threads in 2 4 8 $T; do
  trace=()
  [[ $threads == "$T" ]] && trace=(--trace "$L/cores_segment_$threads.trace.json")
  step "cores_segment_$threads" 60 "$K" "${trace[@]}" segment "$C/person.mp4" -o "$O/s.mp4" --mode cpu \
    --hw-decode none --throughput --threads "$threads" --config "$C/gpu_config.yaml" -q
done
step cores_segment_${T}_default 60 "$K" segment "$C/person.mp4" -o "$O/s.mp4" --mode cpu --hw-decode none \
  --throughput --threads $T -q

# 4. Where the kernels' time goes, for tuning (docs/gpu.md, "Tuning from the profile"): Nsight Compute on every launch
# of `kiln bench ops --resident device` (1080p, batch 32, a warm-up and one timed run), one bench process per op so
# that the summary can say which op each kernel served (ncu_ops.pids: process id and op; the CSV names the process):
# duration, memory and compute throughput against the peaks, occupancy, and how much of each 32-byte sector global
# loads and stores use (coalescing). --clock-control none: the clocks the bench ran at, and none left locked by a
# profile its limit cut. Last: the step the deadline may leave out. The sector metrics come from instrumented code;
# where ncu refuses them the kernels are profiled again without them, the refused attempt marked "refused".
if [[ $CPU_ONLY == 0 ]]; then
  ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
  "$K" bench ops --help | sed -n 's/.*--ops.*(default all: \(.*\))$/\1/p' | tr -d ' ' | tr ',' '\n' > "$L/ncu_ops.order"
  ncu_ops=("$ncu" --csv --page details --print-kernel-base function --clock-control none --target-processes all
    --section SpeedOfLight --section Occupancy --section LaunchStats)
  # shellcheck disable=SC2016
  bench_each=(bash -c 'while read -r op; do
      "$1" bench ops --ops "$op" --resident device --mode gpu --sizes large --batch-sizes 32 --iterations 1 \
        --threads "$2" > /dev/null &
      echo "$! $op" >> "$4"
      wait $!
    done < "$3"' _ "$K" "$T" "$L/ncu_ops.order" "$L/ncu_ops.pids")
  sectors=smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.pct
  sectors=$sectors,smsp__sass_average_data_bytes_per_sector_mem_global_op_st.pct
  step ncu_ops 120 "${ncu_ops[@]}" --metrics "$sectors" --log-file "$L/ncu_ops.csv" "${bench_each[@]}"
  rc=$?
  if ((rc != 124 && rc != 137)) && ! grep -q '"Kernel Name"' "$L/ncu_ops.csv" 2> /dev/null &&
    grep -qi '==ERROR==.*metric' "$L/ncu_ops.csv" "$L/ncu_ops.log" 2> /dev/null; then
    sed -i 's/^ncu_ops\t[^\t]*\t/ncu_ops\trefused\t/' "$L/steps.tsv"
    mv "$L/ncu_ops.csv" "$L/ncu_ops_refused.csv"
    rm -f "$L/ncu_ops.pids"
    step ncu_ops_plain 120 "${ncu_ops[@]}" --log-file "$L/ncu_ops.csv" "${bench_each[@]}"
  fi
fi

# Exit 1 when a step failed or was not run (the summary says which).
! cut -f2 "$L/steps.tsv" | grep -qvE '^(0|refused)$'
