// Shared declaration between the torch-free kernel file and the op file.
#pragma once
void relu_launch(const float* x, float* y, long long n, void* stream);
