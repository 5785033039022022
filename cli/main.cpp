#include <cstdio>
#include <cstring>

#include "kiln/version.h"

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "--version") == 0) {
    std::printf("kiln %s\n", KILN_VERSION_STRING);
    return 0;
  }
  std::fprintf(stderr, "usage: kiln --version\n");
  return 2;
}
