# kiln: `make demo` builds and renders the built-in demo; `make test` builds and runs every test.
BUILD_DIR ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=
KILN_ORT_GPU ?= OFF
comma := ,

DEBIAN_PACKAGES := build-essential cmake ninja-build pkg-config lld \
  libhdf5-dev hdf5-tools libzstd-dev zlib1g-dev libspng-dev libturbojpeg0-dev libjpeg62-turbo-dev \
  libwebp-dev libgif-dev libtiff-dev libheif-dev liblcms2-dev libstb-dev \
  libfmt-dev libspdlog-dev nlohmann-json3-dev libyaml-cpp-dev libcli11-dev libboost-dev \
  libgtest-dev libgmock-dev libbenchmark-dev libflatbuffers-dev \
  libopencv-dev libcairo2-dev libfaiss-dev libdlib-dev \
  ocl-icd-opencl-dev opencl-clhpp-headers opencl-c-headers pocl-opencl-icd clinfo \
  python3 python3-dev python3-pip python3-venv python3-setuptools python3-wheel pybind11-dev libdlpack-dev python3-numpy python3-h5py python3-pytest python3-matplotlib python3-pandas python3-tables python3-feather-format python3-pil libheif-examples \
  python3-torch \
  python3-onnx python3-opencv python3-skimage libonnx-dev libprotobuf-dev protobuf-compiler \
  libavformat-dev libavcodec-dev libswscale-dev libavdevice-dev ffmpeg \
  python3-distributed python3-yaml slurmctld slurmd slurm-client munge time \
  libgrpc++-dev protobuf-compiler-grpc python3-grpcio chromium chromium-driver python3-selenium \
  python3-fastapi python3-uvicorn wrk python3-websocket libssl-dev openssl

.PHONY: deps build demo test tsan bench sanitize fuzz soak clean

# A new build folder is made for Ninja where it is installed (make deps installs it): Ninja starts a target's objects
# while the libraries it links are still being built, which keeps both of CI's cores busy; a folder that exists keeps
# the generator it was made with (CMake reads CMAKE_GENERATOR for new folders only).
# (Decided when cmake runs, after deps may have installed it.)
NEW_FOLDER_GENERATOR = CMAKE_GENERATOR="$${CMAKE_GENERATOR:-$$(command -v ninja > /dev/null && echo Ninja)}"

deps:
	@missing=""; for p in $(DEBIAN_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	command -v npm > /dev/null || missing="$$missing npm"; \
	if [ -n "$$missing" ]; then \
	  echo "Installing:$$missing"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends $$missing; \
	else echo "All Debian packages present."; fi
	/usr/bin/python3 tools/deps/fetch_deps.py --groups $(if $(filter ON,$(KILN_ORT_GPU)),cpu$(comma)gpu,cpu)
	/usr/bin/python3 tools/models/prepare_models.py

build:
	$(NEW_FOLDER_GENERATOR) cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=Release -DKILN_ORT_GPU=$(KILN_ORT_GPU) $(CMAKE_FLAGS)
	cmake --build $(BUILD_DIR) -j $(JOBS)

demo: deps build
	rm -rf demo.h5 demo.h5.parts
	$(BUILD_DIR)/kiln render --demo -o demo.h5 --preview demo_preview.png
	$(BUILD_DIR)/kiln info demo.h5

# The pipeline, profiler and executor tests also run under ThreadSanitizer (a separate build in build-tsan;
# tests/tsan_suppressions.txt names the uninstrumented libraries whose own threads TSan cannot follow), then every
# test. The TSan build is -O1 with line tables only (-g1): reports keep their file:line stacks, and it compiles in
# much less time than -O2 -g. The segmentation engine and job under TSan need most of kiln built again, instrumented
# (about three of CI's 30 minutes): `make sanitize` runs them (TSAN_SEGMENT=1).
test: deps build tsan
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS)

TSAN_DIR ?= build-tsan
TSAN_SEGMENT ?= 0
tsan: deps
	$(NEW_FOLDER_GENERATOR) cmake -S . -B $(TSAN_DIR) -DKILN_SANITIZE=thread -DKILN_CUDA=OFF -DKILN_OPENCL=OFF -DKILN_BUILD_BENCH=OFF \
	  -DKILN_BUILD_PYTHON=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG" "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG"
	cmake --build $(TSAN_DIR) -j $(JOBS) --target kiln_tests_pipeline kiln_tests_profiler kiln_tests_exec \
	  $$([ "$(TSAN_SEGMENT)" = 1 ] && cmake --build $(TSAN_DIR) --target help | grep -o 'kiln_tests_apps_segment' | head -1)
	cd $(TSAN_DIR) && TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1:suppressions=$(CURDIR)/tests/tsan_suppressions.txt \
	  ctest --output-on-failure -j $(JOBS) -L "pipeline|profiler|exec$$([ "$(TSAN_SEGMENT)" = 1 ] && echo '|segment')"

# Results and how to read them: docs/benchmarks.md.
bench: deps build
	$(BUILD_DIR)/bench/render_peers --json $(BUILD_DIR)/render_peers.json
	KILN_OPENCL_DEVICE_TYPE=all $(BUILD_DIR)/kiln bench render --batch-sizes 1 10 100 1000 --json > $(BUILD_DIR)/bench_render.json
	rm -rf $(BUILD_DIR)/bench_e2e.h5 $(BUILD_DIR)/bench_e2e.h5.parts
	$(BUILD_DIR)/kiln render --demo --demo-points 85986 -o $(BUILD_DIR)/bench_e2e.h5 --threads 2 --quiet
	PYTHONPATH=$(BUILD_DIR)/python /usr/bin/python3 bench/python_render_vs_matplotlib.py --json $(BUILD_DIR)/python_bench.json
	PYTHONPATH=$(BUILD_DIR)/python /usr/bin/python3 bench/render_jkx.py --json $(BUILD_DIR)/render_jkx.json
	$(BUILD_DIR)/bench/ops_peers --threads 1 --json $(BUILD_DIR)/ops_peers.json
	$(BUILD_DIR)/bench/decode_peers --threads 1,2 --json $(BUILD_DIR)/decode_peers.json
	KILN_OPENCL_DEVICE_TYPE=all $(BUILD_DIR)/kiln bench ops --json > $(BUILD_DIR)/bench_ops.json

# Every test again under AddressSanitizer + UndefinedBehaviorSanitizer (no CUDA; about 15 minutes on 2 cores), then
# the ThreadSanitizer suites with the segmentation engine and job.
sanitize: deps
	$(NEW_FOLDER_GENERATOR) cmake -S . -B build-asan -DKILN_SANITIZE="address,undefined" -DKILN_CUDA=OFF -DKILN_BUILD_BENCH=OFF \
	  -DCMAKE_BUILD_TYPE=RelWithDebInfo
	cmake --build build-asan -j $(JOBS)
	cd build-asan && UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	  LSAN_OPTIONS=suppressions=$(CURDIR)/fuzz/lsan_suppressions.txt ctest --output-on-failure -j $(JOBS)
	$(MAKE) tsan TSAN_SEGMENT=1

# SIGKILL at KILN_SOAK_KILLS (20) random moments of each long job, each followed by --resume: identical output.
soak: build
	KILN_CLI=$(CURDIR)/$(BUILD_DIR)/kiln /usr/bin/python3 -m pytest -q -s -p no:cacheprovider tests/soak/kill_soak.py

# Each fuzz harness as a libFuzzer program (clang, ASan + UBSan) for FUZZ_SECONDS on its corpus (fuzz/corpus/<name>,
# new inputs in build-fuzz/corpus/<name>); a crash stops with its input in build-fuzz/ (add it to fuzz/corpus/<name>:
# the test build replays every corpus file). docs/reliability.md records the runs.
FUZZ_SECONDS ?= 600
FUZZ_HARNESSES = series_csv series_npy series_hdf5 series_parquet render_config image_decode png_direct image_webp \
  image_gif image_bmp image_tiff image_heif image_list video_decode \
  model_load segment_config piece_record job_part serve_request serve_multipart
fuzz: deps
	$(NEW_FOLDER_GENERATOR) CC=clang CXX=clang++ cmake -S . -B build-fuzz -DKILN_FUZZ=ON -DKILN_SANITIZE="address,undefined" -DKILN_CUDA=OFF \
	  -DKILN_OPENCL=OFF -DKILN_BUILD_TESTS=OFF -DKILN_BUILD_BENCH=OFF -DKILN_BUILD_PYTHON=OFF \
	  -DCMAKE_BUILD_TYPE=RelWithDebInfo
	cmake --build build-fuzz -j $(JOBS) --target $(addprefix fuzz_,$(FUZZ_HARNESSES))
	for h in $(FUZZ_HARNESSES); do mkdir -p build-fuzz/corpus/$$h && \
	  UBSAN_OPTIONS=halt_on_error=1 LSAN_OPTIONS=suppressions=$(CURDIR)/fuzz/lsan_suppressions.txt \
	    build-fuzz/fuzz/fuzz_$$h -max_total_time=$(FUZZ_SECONDS) -rss_limit_mb=2048 \
	    -timeout=20 -print_final_stats=1 -artifact_prefix=build-fuzz/crash-$$h- build-fuzz/corpus/$$h \
	    fuzz/corpus/$$h 2>&1 | tee build-fuzz/fuzz-$$h.log | grep -E "^(#|Done|stat::|==)" | tail -4 || exit 1; \
	  grep -q "Done " build-fuzz/fuzz-$$h.log || exit 1; done

clean:
	rm -rf $(BUILD_DIR)
