// Which optional instruction sets this CPU has, asked once. The kernels are
// built for the x86-64-v3 baseline (AVX2, FMA, F16C); the AVX-512 ones sit
// in their own translation units and run only where this says so.
#pragma once

namespace kvgate {

// AVX-512 F, BW, DQ, VL and VNNI: what engine/cpu/*_avx512.cpp is built for.
// KVGATE_NO_AVX512=1 in the environment answers false (to measure and test
// the AVX2 kernels on a machine that has both).
bool cpu_has_avx512();

}  // namespace kvgate
