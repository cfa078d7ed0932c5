/* cuda_api.h: the few CUDA Driver API types, constants and entry-point
 * signatures tilec uses, declared here so nothing needs the CUDA headers or
 * links libcuda at build time.  Values are those of cuda.h (CUDA 12/13); the
 * ABI of every entry point is the one cuGetProcAddress returns when asked
 * with TL_CU_API_VERSION (12000), i.e. the *_v2 variants where they exist. */
#ifndef TILEC_CUDA_API_H
#define TILEC_CUDA_API_H

#include <stddef.h>
#include <stdint.h>

#define TL_CU_API_VERSION 12000 /* the API version we request entry points for */

typedef int CUresult;                 /* CUDA_SUCCESS = 0 */
typedef int CUdevice;
typedef unsigned long long CUdeviceptr; /* 64-bit (v2 API) */
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
typedef struct CUlinkState_st *CUlinkState;
typedef struct CUgraph_st *CUgraph;
typedef struct CUgraphExec_st *CUgraphExec;
typedef struct CUevent_st *CUevent;
typedef uint64_t cuuint64_t;

enum {
  CUDA_SUCCESS = 0,
  CUDA_ERROR_INVALID_VALUE = 1,
  CUDA_ERROR_OUT_OF_MEMORY = 2,
  CUDA_ERROR_NOT_INITIALIZED = 3,
  CUDA_ERROR_NO_DEVICE = 100,
  CUDA_ERROR_INVALID_DEVICE = 101,
  CUDA_ERROR_INVALID_PTX = 218,
  CUDA_ERROR_UNSUPPORTED_PTX_VERSION = 222,
  CUDA_ERROR_NOT_FOUND = 500
};

/* CUdevice_attribute */
enum {
  CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1,
  CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X = 5,
  CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y = 6,
  CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z = 7,
  CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK = 8,
  CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK = 12,
  CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
  CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97
};

/* CUfunction_attribute */
enum {
  CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 0,
  CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1,
  CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES = 3,
  CU_FUNC_ATTRIBUTE_NUM_REGS = 4,
  CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8
};

/* CUpointer_attribute (cuPointerGetAttribute) and CUmemorytype */
enum {
  CU_POINTER_ATTRIBUTE_CONTEXT = 1,          /* CUcontext; NULL for pool / VMM memory */
  CU_POINTER_ATTRIBUTE_MEMORY_TYPE = 2,      /* unsigned (CUmemorytype) */
  CU_POINTER_ATTRIBUTE_IS_MANAGED = 8,       /* bool */
  CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL = 9,   /* int */
  CU_POINTER_ATTRIBUTE_RANGE_START_ADDR = 11, /* CUdeviceptr: start of the allocation */
  CU_POINTER_ATTRIBUTE_RANGE_SIZE = 12       /* size_t: its size */
};
enum { CU_MEMORYTYPE_HOST = 1, CU_MEMORYTYPE_DEVICE = 2, CU_MEMORYTYPE_ARRAY = 3, CU_MEMORYTYPE_UNIFIED = 4 };

/* CUjit_option */
enum {
  CU_JIT_MAX_REGISTERS = 0,
  CU_JIT_WALL_TIME = 2,
  CU_JIT_INFO_LOG_BUFFER = 3,
  CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4,
  CU_JIT_ERROR_LOG_BUFFER = 5,
  CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6,
  CU_JIT_OPTIMIZATION_LEVEL = 7,
  CU_JIT_TARGET_FROM_CUCONTEXT = 8,
  CU_JIT_TARGET = 9,
  CU_JIT_LOG_VERBOSE = 12
};
typedef int CUjit_option;

/* CUjitInputType */
enum { CU_JIT_INPUT_CUBIN = 0, CU_JIT_INPUT_PTX = 1 };

/* CUjit_target: 10 * major + minor; "a" (arch-specific) targets add this. */
#define TL_CU_ACCELERATED_TARGET_BASE 0x10000

/* CUstreamCaptureMode */
enum { CU_STREAM_CAPTURE_MODE_GLOBAL = 0, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL = 1,
       CU_STREAM_CAPTURE_MODE_RELAXED = 2 };

enum { CU_GET_PROC_ADDRESS_DEFAULT = 0 };
typedef int CUdriverProcAddressQueryResult;

/* Entry-point signatures (typedef names: PFN_<base name>). */
typedef CUresult (*PFN_cuGetProcAddress_v2)(const char *symbol, void **pfn, int cudaVersion,
                                            cuuint64_t flags, CUdriverProcAddressQueryResult *status);
typedef CUresult (*PFN_cuGetProcAddress_v1)(const char *symbol, void **pfn, int cudaVersion,
                                            cuuint64_t flags);
typedef CUresult (*PFN_cuInit)(unsigned flags);
typedef CUresult (*PFN_cuDriverGetVersion)(int *version);
typedef CUresult (*PFN_cuGetErrorName)(CUresult e, const char **s);
typedef CUresult (*PFN_cuGetErrorString)(CUresult e, const char **s);
typedef CUresult (*PFN_cuDeviceGetCount)(int *n);
typedef CUresult (*PFN_cuDeviceGet)(CUdevice *d, int ordinal);
typedef CUresult (*PFN_cuDeviceGetAttribute)(int *v, int attrib, CUdevice d);
typedef CUresult (*PFN_cuDeviceGetName)(char *name, int len, CUdevice d);
typedef CUresult (*PFN_cuDevicePrimaryCtxRetain)(CUcontext *c, CUdevice d);
typedef CUresult (*PFN_cuDevicePrimaryCtxRelease)(CUdevice d);
typedef CUresult (*PFN_cuCtxSetCurrent)(CUcontext c);
typedef CUresult (*PFN_cuCtxGetCurrent)(CUcontext *c);
typedef CUresult (*PFN_cuCtxSynchronize)(void);
typedef CUresult (*PFN_cuLinkCreate)(unsigned nopts, CUjit_option *opts, void **vals, CUlinkState *s);
typedef CUresult (*PFN_cuLinkAddData)(CUlinkState s, int type, void *data, size_t size, const char *name,
                                      unsigned nopts, CUjit_option *opts, void **vals);
typedef CUresult (*PFN_cuLinkComplete)(CUlinkState s, void **cubin, size_t *size);
typedef CUresult (*PFN_cuLinkDestroy)(CUlinkState s);
typedef CUresult (*PFN_cuModuleLoadData)(CUmodule *m, const void *image);
typedef CUresult (*PFN_cuModuleLoadDataEx)(CUmodule *m, const void *image, unsigned nopts, CUjit_option *opts,
                                           void **vals);
typedef CUresult (*PFN_cuModuleUnload)(CUmodule m);
typedef CUresult (*PFN_cuModuleGetFunction)(CUfunction *f, CUmodule m, const char *name);
typedef CUresult (*PFN_cuFuncGetAttribute)(int *v, int attrib, CUfunction f);
typedef CUresult (*PFN_cuFuncSetAttribute)(CUfunction f, int attrib, int value);
typedef CUresult (*PFN_cuLaunchKernel)(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                                       unsigned by, unsigned bz, unsigned smem, CUstream s, void **params,
                                       void **extra);
typedef CUresult (*PFN_cuPointerGetAttribute)(void *data, int attribute, CUdeviceptr ptr);
/* Used by the GPU tests and the benchmark (tests/gpu/gpu_util.c). */
typedef CUresult (*PFN_cuMemAlloc)(CUdeviceptr *p, size_t n);
typedef CUresult (*PFN_cuMemFree)(CUdeviceptr p);
typedef CUresult (*PFN_cuMemcpyHtoD)(CUdeviceptr dst, const void *src, size_t n);
typedef CUresult (*PFN_cuMemcpyDtoH)(void *dst, CUdeviceptr src, size_t n);
typedef CUresult (*PFN_cuMemsetD8)(CUdeviceptr dst, unsigned char v, size_t n);
typedef CUresult (*PFN_cuStreamCreate)(CUstream *s, unsigned flags);
typedef CUresult (*PFN_cuStreamDestroy)(CUstream s);
typedef CUresult (*PFN_cuStreamSynchronize)(CUstream s);
typedef CUresult (*PFN_cuStreamBeginCapture)(CUstream s, int mode);
typedef CUresult (*PFN_cuStreamEndCapture)(CUstream s, CUgraph *g);
typedef CUresult (*PFN_cuThreadExchangeStreamCaptureMode)(int *mode);
typedef CUresult (*PFN_cuGraphInstantiateWithFlags)(CUgraphExec *e, CUgraph g, unsigned long long flags);
typedef CUresult (*PFN_cuGraphLaunch)(CUgraphExec e, CUstream s);
typedef CUresult (*PFN_cuGraphExecDestroy)(CUgraphExec e);
typedef CUresult (*PFN_cuGraphDestroy)(CUgraph g);
/* Stream-ordered memory and the 2-D copy (lib/api/pitch_repack.c, TILEC_PITCH_REPACK=1): the
 * driver's CUDA_MEMCPY2D (v2 layout; the memory types are CUmemorytype, an int-sized enum). */
typedef struct CUDA_MEMCPY2D_st {
  size_t srcXInBytes, srcY;
  unsigned srcMemoryType;
  const void *srcHost;
  CUdeviceptr srcDevice;
  void *srcArray;
  size_t srcPitch;
  size_t dstXInBytes, dstY;
  unsigned dstMemoryType;
  void *dstHost;
  CUdeviceptr dstDevice;
  void *dstArray;
  size_t dstPitch;
  size_t WidthInBytes, Height;
} CUDA_MEMCPY2D;
typedef CUresult (*PFN_cuMemcpy2DAsync)(const CUDA_MEMCPY2D *p, CUstream s);
typedef CUresult (*PFN_cuMemAllocAsync)(CUdeviceptr *p, size_t n, CUstream s);
typedef CUresult (*PFN_cuMemFreeAsync)(CUdeviceptr p, CUstream s);
/* The tile counters of TILEC_ATTN_SCHED=1 (lib/api/sched_slot.c): a counter pair zeroed on its stream,
 * and whether that stream is capturing (CUstreamCaptureStatus: 0 none, 1 active, 2 invalidated). */
typedef CUresult (*PFN_cuMemsetD32Async)(CUdeviceptr dst, unsigned v, size_t n, CUstream s);
typedef CUresult (*PFN_cuStreamIsCapturing)(CUstream s, int *status);
/* Tensor maps (TMA, CUDA 12.0+): cuTensorMapEncodeTiled and its enums. */
typedef struct CUtensorMap_st { _Alignas(64) uint64_t opaque[16]; } CUtensorMap;
enum { CU_TENSOR_MAP_DATA_TYPE_UINT8 = 0, CU_TENSOR_MAP_DATA_TYPE_FLOAT16 = 6, CU_TENSOR_MAP_DATA_TYPE_FLOAT32 = 7,
       CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 = 9 };
enum { CU_TENSOR_MAP_INTERLEAVE_NONE = 0 };
enum { CU_TENSOR_MAP_SWIZZLE_NONE = 0, CU_TENSOR_MAP_SWIZZLE_32B = 1, CU_TENSOR_MAP_SWIZZLE_64B = 2,
       CU_TENSOR_MAP_SWIZZLE_128B = 3 };
enum { CU_TENSOR_MAP_L2_PROMOTION_NONE = 0, CU_TENSOR_MAP_L2_PROMOTION_L2_128B = 2,
       CU_TENSOR_MAP_L2_PROMOTION_L2_256B = 3 };
enum { CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE = 0 }; /* out-of-bounds elements read as zero */
typedef CUresult (*PFN_cuTensorMapEncodeTiled)(CUtensorMap *map, int dtype, unsigned rank, void *addr,
                                               const cuuint64_t *dims, const cuuint64_t *strides,
                                               const unsigned *box, const unsigned *elem_strides, int interleave,
                                               int swizzle, int l2promotion, int oob_fill);
/* Timing (runtime/timing.c: the autotuner). */
enum { CU_EVENT_DEFAULT = 0 };
typedef CUresult (*PFN_cuEventCreate)(CUevent *e, unsigned flags);
typedef CUresult (*PFN_cuEventRecord)(CUevent e, CUstream s);
typedef CUresult (*PFN_cuEventSynchronize)(CUevent e);
typedef CUresult (*PFN_cuEventElapsedTime)(float *ms, CUevent start, CUevent end);
typedef CUresult (*PFN_cuEventDestroy)(CUevent e);

#endif
