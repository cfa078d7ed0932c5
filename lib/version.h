/* version.h: tilec's version and the LLVM version it links, as CMake defines them for tilec_back
 * (CMakeLists.txt: TILEC_VERSION_STRING, TILEC_LLVM_VERSION); the fallbacks serve a build that
 * compiles these files another way. */
#ifndef TILEC_VERSION_H
#define TILEC_VERSION_H

#ifndef TILEC_VERSION_STRING
#define TILEC_VERSION_STRING "0.1.0"
#endif
#ifndef TILEC_LLVM_VERSION
#define TILEC_LLVM_VERSION "unknown"
#endif

#endif
