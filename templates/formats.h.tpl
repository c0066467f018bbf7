${banner}
// mgen_formats.h -- the format table (templates/formats.lua) as X-macro lists: the one source of
// every name map and validity rule in the runtime, tools, bench and tests (runtime/src/formats/formats.c
// builds its functions from these). Plain C preprocessor, no types: include it anywhere.
// mgen.h's and mgen_kernel.h's enums stay hand-written (public ABI); tests/runtime/test_formats.c
// checks that they agree with these lists.
#ifndef MGEN_FORMATS_TABLE_H
#define MGEN_FORMATS_TABLE_H

// Activation types: X(ID, name, mgen_act value, device C type, bytes, non-finite bits: all ones
// exactly in inf and NaN). MGEN_ACT_##ID.
#define MGEN_ACT_LIST(X) \
//% for _, a in ipairs(formats.acts) do
  X(${string.upper(a.name)}, "${a.name}", ${a.enum}, "${a.c_type}", ${a.bytes}, ${string.format("0x%04x", a.nonfinite)}) \
//% end
  /* end */

// Weight formats: X(ID, name, mgen_wfmt value, bits per code, default layout ID). MGEN_WFMT_##ID.
#define MGEN_WFMT_LIST(X) \
//% for _, w in ipairs(formats.wfmts) do
  X(${string.upper(w.name)}, "${w.name}", ${w.enum}, ${w.bits}, ${string.upper(w.layouts[1])}) \
//% end
  /* end */

// Scale schemes: X(ID, name, mgen_scheme value, weight format ID, scale storage ("act": the
// activation type), bytes per stored scale, FP32 global scale in the checkpoint (0/1), n FP32
// column factors after the packed scales (0/1), non-finite bits of a stored scale (all ones
// exactly in its inf and NaN; 0 for "act": the activation type's), safe scale byte).
// MGEN_SCHEME_##ID.
#define MGEN_SCHEME_LIST(X) \
//% for _, s in ipairs(formats.schemes) do
  X(${string.upper(s.name)}, "${s.name}", ${s.enum}, ${string.upper(s.wfmt)}, "${s.scale}", ${s.scale_bytes}, ${s.global_scale and 1 or 0}, ${s.column_factors and 1 or 0}, ${string.format("0x%02x", s.nonfinite)}, ${string.format("0x%02x", s.safe_scale_byte)}) \
//% end
  /* end */

// Valid group sizes: X(scheme ID, group) -- K elements per scale, 0 = one per output column.
#define MGEN_SCHEME_GROUP_LIST(X) \
//% for _, s in ipairs(formats.schemes) do
//% for _, g in ipairs(s.groups) do
  X(${string.upper(s.name)}, ${g}) \
//% end
//% end
  /* end */

// Scale schemes with zero points: X(scheme ID, bits per zero point), stored after the scales
// (runtime/src/formats/layout.h, "Zero points"). A scheme not listed has none.
#define MGEN_SCHEME_ZERO_LIST(X) \
//% for _, s in ipairs(formats.schemes) do
//% if s.zero_bits > 0 then
  X(${string.upper(s.name)}, ${s.zero_bits}) \
//% end
//% end
  /* end */

// Packed weight layouts: X(ID, name, layout id, kernel families that read it, comma-separated).
// MGEN_LAYOUT_##ID.
#define MGEN_LAYOUT_LIST(X) \
//% for _, l in ipairs(formats.layouts) do
  X(${string.upper(l.name)}, "${l.name}", ${l.enum}, "${table.concat(l.families, ",")}") \
//% end
  /* end */

// Layouts whose kernels take activations of another type than the weights' act (the layout
// row's a_type): X(layout ID, activation type name). FP8 E4M3 with FP32 row scales:
// mgen_gemm_a8. A layout not listed is read with activations of the act itself (mgen_gemm).
#define MGEN_LAYOUT_A_TYPE_LIST(X) \
//% for _, l in ipairs(formats.layouts) do
//% if l.a_type then
  X(${string.upper(l.name)}, "${l.a_type}") \
//% end
//% end
  /* end */

// Layouts the weights of each scale scheme can be packed in: X(scheme ID, layout ID), a subset
// of its weight format's (MGEN_WFMT_LAYOUT_LIST).
#define MGEN_SCHEME_LAYOUT_LIST(X) \
//% for _, s in ipairs(formats.schemes) do
//% for _, l in ipairs(s.layouts) do
  X(${string.upper(s.name)}, ${string.upper(l)}) \
//% end
//% end
  /* end */

// Layouts each weight format can be packed in: X(weight format ID, layout ID), default first.
#define MGEN_WFMT_LAYOUT_LIST(X) \
//% for _, w in ipairs(formats.wfmts) do
//% for _, l in ipairs(w.layouts) do
  X(${string.upper(w.name)}, ${string.upper(l)}) \
//% end
//% end
  /* end */

// Operations: X(ID, name, mgen_op value). MGEN_OP_##ID.
#define MGEN_OP_LIST(X) \
//% for _, o in ipairs(formats.ops) do
  X(${string.upper(o.name)}, "${o.name}", ${o.enum}) \
//% end
  /* end */

#define MGEN_ACT_COUNT ${#formats.acts}
#define MGEN_WFMT_COUNT ${#formats.wfmts}
#define MGEN_SCHEME_COUNT ${#formats.schemes}
#define MGEN_LAYOUT_COUNT ${#formats.layouts}
#define MGEN_OP_COUNT ${#formats.ops}

#endif // MGEN_FORMATS_TABLE_H
