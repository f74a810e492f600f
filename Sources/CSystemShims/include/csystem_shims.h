#ifndef BLURFARM_CSYSTEM_SHIMS_H
#define BLURFARM_CSYSTEM_SHIMS_H

/// 1 when this CPU runs the instruction set blurfarm's kernels were built for, else 0.
/// On x86-64 the kernels use AVX2 (x86-64-v3); a constructor in this library checks it before
/// any Swift code runs and exits with a clear message instead of dying of SIGILL.
int blurfarm_cpu_supported(void);

#endif
