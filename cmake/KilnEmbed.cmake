# Embeds the OpenCL program sources into generated C++ headers, one per program (one per src/ops/opencl/*.cl).
#
# kiln_embed_opencl(target) adds, for each src/ops/opencl/<name>.cl, a build step that concatenates, in order,
#   src/ops/kernel_defs.h, [src/ops/image_px.h and yuv_px.h for image ops], src/ops/<name>_px.h (if it exists),
#   <name>.cl
# (dropping their quoted #include lines, which name each other) behind `#pragma OPENCL FP_CONTRACT OFF`, and
# writes them as C++ raw string literals to ${CMAKE_CURRENT_BINARY_DIR}/generated/opencl_<name>_source.h:
#   namespace kiln::opencl::<name>_program { inline constexpr char kSource[] = R"kiln_cl(...)kiln_cl" ...; }
# (render keeps its historical name kiln::opencl::kRenderProgramSource). Regenerated whenever a source changes.
#
# kiln_embed_file(target input symbol namespace) embeds one file as it is (a script the program runs) the same way, into
# ${CMAKE_CURRENT_BINARY_DIR}/generated/<input's name>_source.h.
#
# This file is also the generator: the build step runs it in script mode,
#   cmake -DKILN_EMBED_OUTPUT=<header> -DKILN_EMBED_INPUTS=<a;b;c> -P KilnEmbed.cmake

set(KILN_EMBED_SCRIPT "${CMAKE_CURRENT_LIST_FILE}")

function(kiln_embed_opencl target)
  set(root "${PROJECT_SOURCE_DIR}/src/ops")
  file(GLOB programs CONFIGURE_DEPENDS "${root}/opencl/*.cl")
  foreach(program IN LISTS programs)
    get_filename_component(name "${program}" NAME_WE)
    set(inputs "${root}/kernel_defs.h")
    if(name STREQUAL "render")
      set(symbol "kRenderProgramSource")
      set(namespace "kiln::opencl")
    else()
      list(APPEND inputs "${root}/image_px.h" "${root}/yuv_px.h")
      set(symbol "kSource")
      set(namespace "kiln::opencl::${name}_program")
    endif()
    if(EXISTS "${root}/${name}_px.h")
      list(APPEND inputs "${root}/${name}_px.h")
    endif()
    list(APPEND inputs "${program}")
    set(output "${CMAKE_CURRENT_BINARY_DIR}/generated/opencl_${name}_source.h")
    string(REPLACE ";" "|" inputs_arg "${inputs}")
    add_custom_command(
      OUTPUT "${output}"
      COMMAND "${CMAKE_COMMAND}" "-DKILN_EMBED_OUTPUT=${output}" "-DKILN_EMBED_INPUTS=${inputs_arg}"
              "-DKILN_EMBED_SYMBOL=${symbol}" "-DKILN_EMBED_NAMESPACE=${namespace}" -P "${KILN_EMBED_SCRIPT}"
      DEPENDS ${inputs} "${KILN_EMBED_SCRIPT}"
      COMMENT "Embedding the OpenCL ${name} program"
      VERBATIM)
    target_sources(${target} PRIVATE "${output}")
  endforeach()
endfunction()

function(kiln_embed_file target input symbol namespace)
  get_filename_component(name "${input}" NAME_WE)
  set(output "${CMAKE_CURRENT_BINARY_DIR}/generated/${name}_source.h")
  add_custom_command(
    OUTPUT "${output}"
    COMMAND "${CMAKE_COMMAND}" "-DKILN_EMBED_OUTPUT=${output}" "-DKILN_EMBED_INPUTS=${input}" "-DKILN_EMBED_PLAIN=ON"
            "-DKILN_EMBED_SYMBOL=${symbol}" "-DKILN_EMBED_NAMESPACE=${namespace}" -P "${KILN_EMBED_SCRIPT}"
    DEPENDS "${input}" "${KILN_EMBED_SCRIPT}"
    COMMENT "Embedding ${name}"
    VERBATIM)
  target_sources(${target} PRIVATE "${output}")
  target_include_directories(${target} PRIVATE "${CMAKE_CURRENT_BINARY_DIR}/generated")
endfunction()

# ---- script mode: generate the header ----
if(CMAKE_SCRIPT_MODE_FILE AND DEFINED KILN_EMBED_OUTPUT)
  # Raw string literals longer than ~16 KB are rejected by some compilers (MSVC), so the program is written as
  # several adjacent literals, each cut at a line end.
  set(kDelimiter "kiln_cl")
  set(kChunkChars 12000)

  string(REPLACE "|" ";" inputs "${KILN_EMBED_INPUTS}")
  set(program "// Generated from kiln's sources by cmake/KilnEmbed.cmake.\n#pragma OPENCL FP_CONTRACT OFF\n")
  set(names "")
  if(KILN_EMBED_PLAIN)  # one file, as it is
    file(READ "${inputs}" program)
    get_filename_component(names "${inputs}" NAME)
    set(inputs "")
  endif()
  foreach(input IN LISTS inputs)
    get_filename_component(name "${input}" NAME)
    list(APPEND names "${name}")
    file(READ "${input}" text)
    # Each file's quoted includes name the files embedded before it: drop them (keeping the line count).
    string(REGEX REPLACE "\n[ \t]*#[ \t]*include[ \t]*\"[^\n]*" "\n/* #include removed by KilnEmbed.cmake */"
           text "\n${text}")
    string(SUBSTRING "${text}" 1 -1 text)
    if(NOT text MATCHES "\n$")
      string(APPEND text "\n")
    endif()
    string(APPEND program "#line 1 \"${name}\"\n${text}")
  endforeach()

  string(FIND "${program}" ")${kDelimiter}\"" clash)
  if(NOT clash EQUAL -1)
    message(FATAL_ERROR "KilnEmbed: ${names} contain the raw-string terminator ')${kDelimiter}\"'")
  endif()

  set(literals "")
  set(rest "${program}")
  string(LENGTH "${rest}" rest_length)
  while(rest_length GREATER 0)
    if(rest_length GREATER kChunkChars)
      string(SUBSTRING "${rest}" 0 ${kChunkChars} chunk)
      string(FIND "${chunk}" "\n" cut REVERSE)
      if(cut EQUAL -1)
        set(cut ${kChunkChars})
      else()
        math(EXPR cut "${cut} + 1")
      endif()
      string(SUBSTRING "${rest}" 0 ${cut} chunk)
      string(SUBSTRING "${rest}" ${cut} -1 rest)
    else()
      set(chunk "${rest}")
      set(rest "")
    endif()
    string(APPEND literals "    R\"${kDelimiter}(${chunk})${kDelimiter}\"\n")
    string(LENGTH "${rest}" rest_length)
  endwhile()

  string(REPLACE ";" ", " names_text "${names}")
  set(header "// Generated by cmake/KilnEmbed.cmake from ${names_text}; do not edit.\n")
  string(APPEND header "#pragma once\n\nnamespace ${KILN_EMBED_NAMESPACE} {\n\n")
  if(KILN_EMBED_PLAIN)
    string(APPEND header "// ${names_text}, as it is.\n")
  else()
    string(APPEND header "// The OpenCL C program: ${names_text}.\n")
  endif()
  string(APPEND header "inline constexpr char ${KILN_EMBED_SYMBOL}[] =\n${literals};\n\n}  // namespace ${KILN_EMBED_NAMESPACE}\n")

  file(WRITE "${KILN_EMBED_OUTPUT}" "${header}")
endif()
