/* Launches through the TVM FFI C ABI (apache-tvm-ffi): tilec_ffi_launch, a
 * TVMFFISafeCallType function (tvm_ffi.Function.__from_extern_c__(its
 * address) makes it callable from Python), so the Python package can hand torch / CuPy / JAX
 * tensors to a launch through tvm-ffi's C converters (DLPack's C exchange API)
 * instead of reading them in Python (docs/python.md "Launch cost").
 *
 * Call: tilec_ffi_launch(table, stream, *kernel_args) -> int.
 *   table   the address (an int) of a tilec_ffi_table: which parameters are
 *           floats (bit i: parameter i) and the kernel's handle per CUDA device
 *           ordinal (NULL: not loaded there);
 *   stream  a CUstream as an int, or None: the stream tvm-ffi set for the call
 *           (the framework's current stream of the first GPU tensor, through
 *           TVMFFIEnvGetStream), else the legacy default stream;
 *   then the kernel's arguments: tensors (ffi.Tensor objects or DLTensor
 *   pointers), ints, bools, floats (as the Python package takes them: an int
 *   for a float parameter is converted, a float for an integer one refused).
 * The result is 0 (launched), a tilec_status > 0 (details in
 * tilec_kernel_error of the handle used), or -1: not taken here (no GPU tensor,
 * no handle for its device, an argument of another kind, too many): the caller
 * then takes its other path, which loads the kernel or gives the full
 * diagnostic.  Only the TVM FFI structs' layouts are used (no tvm-ffi header or
 * library is needed to build this). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* RTLD_DEFAULT */
#endif
#include <dlfcn.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tilec.h"

#define TILEC_FFI_MAX_DEVICES 64
#define TILEC_FFI_MAX_ARGS 64

typedef struct {
  uint64_t float_params;
  tilec_kernel *kernel[TILEC_FFI_MAX_DEVICES];
} tilec_ffi_table;

/* The TVM FFI ABI (tvm/ffi/c_api.h): type indices and the two structs read here. */
enum { FFI_NONE = 0, FFI_INT = 1, FFI_BOOL = 2, FFI_FLOAT = 3, FFI_DLTENSOR_PTR = 7, FFI_TENSOR = 70 };

typedef struct {
  uint64_t combined_ref_count;
  int32_t type_index;
  uint32_t padding;
  void (*deleter)(void *self, int flags);
} ffi_object; /* an ffi.Tensor is this header, then its DLTensor */

typedef struct {
  int32_t type_index;
  uint32_t zero_padding;
  union {
    int64_t v_int64;
    double v_float64;
    void *v_ptr;
  } u;
} ffi_any;

_Static_assert(sizeof(ffi_object) == 24 && sizeof(ffi_any) == 16, "the TVM FFI ABI");

typedef void *(*env_get_stream_fn)(int32_t device_type, int32_t device_id);

/* libtvm_ffi is loaded RTLD_GLOBAL by its Python package: look it up once.
 * A data race on the first calls only stores the same value twice. */
static env_get_stream_fn env_get_stream(void) {
  static env_get_stream_fn fn;
  static int looked;
  if (!looked) {
    void *sym = dlsym(RTLD_DEFAULT, "TVMFFIEnvGetStream");
    fn = *(env_get_stream_fn *)&sym;
    looked = 1;
  }
  return fn;
}

static const DLTensor *tensor_of(const ffi_any *a) {
  if (a->type_index == FFI_TENSOR && a->u.v_ptr) return (const DLTensor *)((const char *)a->u.v_ptr + sizeof(ffi_object));
  if (a->type_index == FFI_DLTENSOR_PTR) return (const DLTensor *)a->u.v_ptr;
  return NULL;
}

static int result(ffi_any *out, int64_t v) {
  out->type_index = FFI_INT;
  out->zero_padding = 0;
  out->u.v_int64 = v;
  return 0;
}

int tilec_ffi_launch(void *self, const void *args_, int32_t nargs, void *out_) {
  const ffi_any *args = args_;
  ffi_any *out = out_;
  (void)self;
  int n = nargs - 2;
  if (n < 0 || n > TILEC_FFI_MAX_ARGS || args[0].type_index != FFI_INT || !args[0].u.v_ptr) return result(out, -1);
  const tilec_ffi_table *table = (const tilec_ffi_table *)args[0].u.v_ptr;
  tilec_arg targs[TILEC_FFI_MAX_ARGS];
  int device = -1;
  for (int i = 0; i < n; i++) {
    const ffi_any *a = &args[2 + i];
    bool float_param = (table->float_params >> i) & 1;
    switch (a->type_index) {
    case FFI_INT:
    case FFI_BOOL:
      if (float_param) {
        targs[i].kind = TILEC_ARG_F64;
        targs[i].u.f64 = (double)a->u.v_int64;
      } else {
        targs[i].kind = TILEC_ARG_I64;
        targs[i].u.i64 = a->u.v_int64;
      }
      break;
    case FFI_FLOAT:
      if (!float_param) return result(out, -1);
      targs[i].kind = TILEC_ARG_F64;
      targs[i].u.f64 = a->u.v_float64;
      break;
    default: {
      const DLTensor *t = tensor_of(a);
      if (!t) return result(out, -1);
      if (device < 0 && (t->device.device_type == kDLCUDA || t->device.device_type == kDLCUDAManaged))
        device = t->device.device_id;
      targs[i].kind = TILEC_ARG_TENSOR;
      targs[i].u.tensor = t;
    }
    }
  }
  if (device < 0 || device >= TILEC_FFI_MAX_DEVICES || !table->kernel[device]) return result(out, -1);
  void *stream = NULL;
  if (args[1].type_index == FFI_INT) {
    stream = args[1].u.v_ptr;
  } else if (args[1].type_index == FFI_NONE) {
    env_get_stream_fn get = env_get_stream();
    if (get) stream = get(kDLCUDA, device);
  } else {
    return result(out, -1);
  }
  return result(out, tilec_kernel_launch(table->kernel[device], targs, n, stream));
}
