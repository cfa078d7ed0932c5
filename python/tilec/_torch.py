"""tilec kernels as torch.library custom ops (imported by tilec.register_torch_op only)."""
from __future__ import annotations

from typing import Any, Optional

import torch

from . import Kernel

_SCALAR = {"i1": "bool", "i8": "int", "i16": "int", "i32": "int", "i64": "int", "u8": "int"}
_registered: dict = {}


def register(kernel: Kernel, name: Optional[str] = None) -> Any:
    qual = name or f"tilec::{kernel.name}"
    if "::" not in qual:
        qual = f"tilec::{qual}"
    if qual in _registered:
        return _registered[qual]
    parts, mutated, alias = [], [], 0
    for p in kernel.params:
        if p.is_tensor:
            if p.written:
                parts.append(f"Tensor(a{alias}!) {p.name}")
                mutated.append(p.name)
                alias += 1
            else:
                parts.append(f"Tensor {p.name}")
        else:
            parts.append(f"{_SCALAR.get(p.dtype, 'float')} {p.name}")
    schema = f"({', '.join(parts)}) -> ()"

    def impl(*args: Any) -> None:
        kernel(*args)  # on torch.cuda.current_stream(): captured by CUDA graphs

    op = torch.library.custom_op(qual, impl, mutates_args=tuple(mutated), schema=schema)

    @op.register_fake
    def _fake(*args: Any) -> None:  # outputs are the mutated inputs: nothing to allocate
        return None

    _registered[qual] = op
    return op
