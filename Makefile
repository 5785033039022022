# kiln: `make demo` builds and renders the built-in demo; `make test` builds and runs every test.
BUILD_DIR ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=
KILN_ORT_GPU ?= OFF
comma := ,

DEBIAN_PACKAGES := build-essential cmake pkg-config \
  libhdf5-dev hdf5-tools libzstd-dev zlib1g-dev libspng-dev libturbojpeg0-dev \
  libfmt-dev libspdlog-dev nlohmann-json3-dev libyaml-cpp-dev libcli11-dev \
  libgtest-dev libgmock-dev libbenchmark-dev \
  libopencv-dev libcairo2-dev libfaiss-dev \
  ocl-icd-opencl-dev opencl-clhpp-headers opencl-c-headers pocl-opencl-icd clinfo \
  python3 python3-dev pybind11-dev python3-numpy python3-h5py python3-pytest python3-matplotlib python3-pandas \
  python3-torch \
  python3-onnx python3-opencv python3-skimage

.PHONY: deps build demo test tsan bench sanitize clean

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
	cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=Release -DKILN_ORT_GPU=$(KILN_ORT_GPU) $(CMAKE_FLAGS)
	cmake --build $(BUILD_DIR) -j $(JOBS)

demo: deps build
	rm -rf demo.h5 demo.h5.parts
	$(BUILD_DIR)/kiln render --demo -o demo.h5 --preview demo_preview.png
	$(BUILD_DIR)/kiln info demo.h5

# The pipeline, profiler and executor tests also run under ThreadSanitizer (a separate build in build-tsan), then
# every test.
test: deps build tsan
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS)

TSAN_DIR ?= build-tsan
tsan: deps
	cmake -S . -B $(TSAN_DIR) -DKILN_SANITIZE=thread -DKILN_CUDA=OFF -DKILN_OPENCL=OFF -DKILN_BUILD_BENCH=OFF \
	  -DKILN_BUILD_PYTHON=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo
	cmake --build $(TSAN_DIR) -j $(JOBS) --target kiln_tests_pipeline kiln_tests_profiler kiln_tests_exec
	cd $(TSAN_DIR) && TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 ctest --output-on-failure -j $(JOBS) -L "pipeline|profiler|exec"

# Results and how to read them: docs/benchmarks.md.
bench: deps build
	$(BUILD_DIR)/bench/render_peers --json $(BUILD_DIR)/render_peers.json
	KILN_OPENCL_DEVICE_TYPE=all $(BUILD_DIR)/kiln bench render --batch-sizes 1 10 100 1000 --json > $(BUILD_DIR)/bench_render.json
	rm -rf $(BUILD_DIR)/bench_e2e.h5 $(BUILD_DIR)/bench_e2e.h5.parts
	$(BUILD_DIR)/kiln render --demo --demo-points 85986 -o $(BUILD_DIR)/bench_e2e.h5 --threads 2 --quiet
	PYTHONPATH=$(BUILD_DIR)/python /usr/bin/python3 bench/python_render_vs_matplotlib.py --json $(BUILD_DIR)/python_bench.json
	$(BUILD_DIR)/bench/ops_peers --threads 1 --json $(BUILD_DIR)/ops_peers.json
	KILN_OPENCL_DEVICE_TYPE=all $(BUILD_DIR)/kiln bench ops --json > $(BUILD_DIR)/bench_ops.json

# Every test again under AddressSanitizer + UndefinedBehaviorSanitizer (no CUDA; about 15 minutes on 2 cores).
sanitize: deps
	cmake -S . -B build-asan -DKILN_SANITIZE="address,undefined" -DKILN_CUDA=OFF -DKILN_BUILD_BENCH=OFF \
	  -DCMAKE_BUILD_TYPE=RelWithDebInfo
	cmake --build build-asan -j $(JOBS)
	cd build-asan && UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 ctest --output-on-failure -j $(JOBS)

clean:
	rm -rf $(BUILD_DIR)
