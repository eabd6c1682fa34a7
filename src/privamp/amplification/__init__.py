"""Privacy amplification: by subsampling, by mixing Markov kernels, by iteration, by diffusion."""
