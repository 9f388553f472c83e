from scipy import sparse as sparse
