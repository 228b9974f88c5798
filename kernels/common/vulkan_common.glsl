// Shared by every Vulkan compute shader of ktune (kernels/<family>/<family>.comp). The contract
// between a shader and the Vulkan backend (tuner/backends/vulkan/):
//
//   - Tensors: storage buffer `binding = i` of set 0 is the family's tensor i, in tensors()
//     order (inputs first). Elements are KT_ELEM (float, or the bits of an fp16 or bf16 as uint16_t)
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
//     them defined: that variant is compiled with glslc at build time, for each precision.
//   - The dispatch is launch.grid_x / grid_y / grid_z workgroups (65535 at most per dimension
//     on many GPUs: the device limits max_grid_x/y/z are there for constraints).
//   - The host defines exactly one of KT_PRECISION_FP32, KT_PRECISION_FP16, KT_PRECISION_BF16.
#extension GL_EXT_shader_16bit_storage : require

// Conversions are macros, not functions: a function taking a 16-bit type needs the 16-bit
// arithmetic extensions (shaderFloat16 / shaderInt16), conversions on load and store do not.
#if defined(KT_PRECISION_FP16)
// fp16 travels as uint16_t bits too, converted with integer operations: on NVIDIA's Vulkan
// driver (580) float <-> float16_t conversions made fp16 softmax and SwiGLU about 3x slower than
// the same shaders in fp32 or bf16 (reports/vulkan.md). Round to nearest even, subnormals,
// infinities and NaN as the hardware conversion gives them.
#define KT_ELEM uint16_t
#define KT_ELEM4 u16vec4
uint kt_half_bits(float v) {
  const uint bits = floatBitsToUint(v);
  const uint sign = (bits >> 16) & 0x8000u;
  const uint magnitude = bits & 0x7fffffffu;
  if (magnitude >= 0x7f800000u) return sign | (magnitude > 0x7f800000u ? 0x7e00u : 0x7c00u);
  if (magnitude >= 0x477ff000u) return sign | 0x7c00u;  // rounds past 65504: infinity
  if (magnitude < 0x38800000u)  // below 2^-14: a subnormal half, in units of 2^-24
    return sign | uint(roundEven(uintBitsToFloat(magnitude) * 16777216.0));
  const uint rebased = magnitude - 0x38000000u;  // exponent bias 127 -> 15
  return sign | ((rebased + 0x0fffu + ((rebased >> 13) & 1u)) >> 13);
}
float kt_half_value(uint h) {
  const uint exponent = (h >> 10) & 31u, mantissa = h & 1023u;
  const float sign = (h & 0x8000u) != 0u ? -1.0 : 1.0;
  if (exponent == 0u) return sign * float(mantissa) * 5.9604644775390625e-8;  // 2^-24
  if (exponent == 31u) return uintBitsToFloat(((h & 0x8000u) << 16) | 0x7f800000u | (mantissa << 13));
  return uintBitsToFloat(((h & 0x8000u) << 16) | ((exponent + 112u) << 23) | (mantissa << 13));
}
vec4 kt_half_values4(uvec4 h) {
  return vec4(kt_half_value(h.x), kt_half_value(h.y), kt_half_value(h.z), kt_half_value(h.w));
}
uvec4 kt_half_bits4(vec4 v) { return uvec4(kt_half_bits(v.x), kt_half_bits(v.y), kt_half_bits(v.z), kt_half_bits(v.w)); }
#define kt_load(v) kt_half_value(uint(v))
#define kt_store(v) uint16_t(kt_half_bits(v))
#define kt_load4(v) kt_half_values4(uvec4(v))
#define kt_store4(v) u16vec4(kt_half_bits4(v))
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
