// Shared by every Vulkan compute shader of ktune (kernels/<family>/<family>.comp). The contract
// between a shader and the Vulkan backend (tuner/backends/vulkan/):
//
//   - Tensors: storage buffer `binding = i` of set 0 is the family's tensor i, in tensors()
//     order (inputs first). Elements are KT_ELEM (float, float16_t, or bf16 bits as uint16_t)
//     unless the tensor has a storage precision of its own (attention's log-sum-exp: float).
//     kt_load / kt_store convert to and from float; KT_ELEM4 and kt_load4 / kt_store4 move four.
//   - Dims: a push-constant block of one `uint` per dim, in dims() order (the backend refuses a
//     problem whose dim does not fit in 32 bits).
//   - Workgroup size: `layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;`
//     the backend sets them from the space's launch.block_x / block_y / block_z.
//   - Tunables: `layout(constant_id = N) const uint KT_<PARAMETER> = default;` (N >= 3), found
//     by name: the backend gives each the config's value of the parameter of that name.
//     `KT_DIM_<DIM>` gets the problem's dim (a size a shader needs at pipeline creation).
//   - A parameter that changes the code's structure is marked "compile_time" in the space and
//     arrives as `#define KT_<PARAMETER> value` (string values: KT_<PARAMETER>_<value>); such
//     variants are compiled at tune time through glslang. Every shader compiles with none of
//     them defined: that variant is compiled with glslc at build time, for each precision, and
//     the space names the value it stands for ("build_time_value"). The kernel library
//     (library/src/vulkan_executor.cpp), which has no glslang, runs only that variant.
//   - The dispatch is launch.grid_x / grid_y / grid_z workgroups (65535 at most per dimension
//     on many GPUs: the device limits max_grid_x/y/z are there for constraints).
//   - The host defines exactly one of KT_PRECISION_FP32, KT_PRECISION_FP16, KT_PRECISION_BF16.
//   - Buffers are declared `restrict`: ktune (and the kernel library, which refuses a call that
//     passes one buffer as two tensors) binds a distinct buffer to every tensor, so the
//     driver may reorder loads past earlier stores. (On NVIDIA's driver it changed no measured
//     speed consistently: reports/vulkan.md.)
#extension GL_EXT_shader_16bit_storage : require

// Conversions are macros, not functions: a function taking a 16-bit type needs the 16-bit
// arithmetic extensions (shaderFloat16 / shaderInt16), conversions on load and store do not.
#if defined(KT_PRECISION_FP16)
#define KT_ELEM float16_t
#define KT_ELEM4 f16vec4
#define kt_load(v) float(v)
#define kt_store(v) float16_t(v)
#define kt_load4(v) vec4(v)
#define kt_store4(v) f16vec4(v)
#elif defined(KT_PRECISION_BF16)
// bfloat16 has no GLSL type on these compilers: its bits travel as uint16_t, and the
// conversions are bit operations (round to nearest even on the way out, NaN kept NaN).
#define KT_ELEM uint16_t
#define KT_ELEM4 u16vec4
uint kt_bf16_bits(float v) {
  const uint bits = floatBitsToUint(v);
  return isnan(v) ? 0x7fc0u : (bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16;
}
uvec4 kt_bf16_bits4(vec4 v) {
  return uvec4(kt_bf16_bits(v.x), kt_bf16_bits(v.y), kt_bf16_bits(v.z), kt_bf16_bits(v.w));
}
#define kt_load(v) uintBitsToFloat(uint(v) << 16)
#define kt_store(v) uint16_t(kt_bf16_bits(v))
#define kt_load4(v) uintBitsToFloat(uvec4(v) << 16)
#define kt_store4(v) u16vec4(kt_bf16_bits4(v))
#else
#define KT_ELEM float
#define KT_ELEM4 vec4
#define kt_load(v) (v)
#define kt_store(v) (v)
#define kt_load4(v) (v)
#define kt_store4(v) (v)
#endif

// Eight 16-bit elements as one 16-byte access (a uvec4 view of the buffer), converted in pairs
// with 32-bit integer and float operations. A typed f16vec4 / u16vec4 view moves only 8 bytes per
// access; the CUDA kernels load 16.
#if defined(KT_PRECISION_FP16) || defined(KT_PRECISION_BF16)
#define KT_PACKED_16BIT 1
#if defined(KT_PRECISION_FP16)
vec2 kt_unpack2(uint w) { return unpackHalf2x16(w); }
uint kt_pack2(vec2 v) { return packHalf2x16(v); }
#else
vec2 kt_unpack2(uint w) { return vec2(uintBitsToFloat(w << 16), uintBitsToFloat(w & 0xffff0000u)); }
uint kt_pack2(vec2 v) { return kt_bf16_bits(v.x) | (kt_bf16_bits(v.y) << 16); }
#endif
void kt_unpack8(uvec4 w, out float v[8]) {
  const vec2 a = kt_unpack2(w.x), b = kt_unpack2(w.y), c = kt_unpack2(w.z), d = kt_unpack2(w.w);
  v[0] = a.x; v[1] = a.y; v[2] = b.x; v[3] = b.y; v[4] = c.x; v[5] = c.y; v[6] = d.x; v[7] = d.y;
}
uvec4 kt_pack8(float v[8]) {
  return uvec4(kt_pack2(vec2(v[0], v[1])), kt_pack2(vec2(v[2], v[3])), kt_pack2(vec2(v[4], v[5])),
               kt_pack2(vec2(v[6], v[7])));
}
// kt_pack8 for values known to be far from overflow (|v| < 2^100: softmax outputs, at most
// 1 / (1 - P)). In bf16 the rounding is then done by three float operations per element instead
// of kt_bf16_bits' integer ones (NVIDIA GPUs run integer operations at half the float rate); on an
// H200 this made the bf16 softmax_dropout 9.5% faster (reports/vulkan.md). Veltkamp's split with
// C = 2^16 + 1 rounds a float to its 8 leading significant bits (bf16's), to nearest, so the bf16
// is the result's upper half. `precise` keeps the driver from fusing or reassociating the three
// operations.
#if defined(KT_PRECISION_BF16)
uint kt_pack2_bounded(vec2 v) {
  precise const vec2 scaled = v * 65537.0;
  precise const vec2 rounded = scaled - (scaled - v);
  const uvec2 bits = floatBitsToUint(rounded);
  return (bits.x >> 16) | (bits.y & 0xffff0000u);
}
uvec4 kt_pack8_bounded(float v[8]) {
  return uvec4(kt_pack2_bounded(vec2(v[0], v[1])), kt_pack2_bounded(vec2(v[2], v[3])),
               kt_pack2_bounded(vec2(v[4], v[5])), kt_pack2_bounded(vec2(v[6], v[7])));
}
#else
#define kt_pack8_bounded kt_pack8
#endif
#endif
