"""heapmpi integration test: a Python MPI program (mpi4py) shares the heap.

Python loads the MPI library privately (RTLD_LOCAL, as a dependency of the
mpi4py extension module); heapmpi must still intercept MPI_Init_thread and
give every rank the same heap. Rank 0 mallocs and fills a block through
libc and broadcasts only its address; every rank reads the bytes there.
Run under wrappers/heapmpirun with /usr/bin/python3 (Debian's mpi4py).
"""
import ctypes, sys
from mpi4py import MPI
comm = MPI.COMM_WORLD
r, n = comm.Get_rank(), comm.Get_size()
libc = ctypes.CDLL(None)
libc.malloc.restype = ctypes.c_void_p
libc.malloc.argtypes = [ctypes.c_size_t]
if r == 0:
    p = libc.malloc(4096)
    ctypes.memset(p, 0x5a, 4096)
else:
    p = None
p = comm.bcast(p, root=0)
data = ctypes.string_at(p, 4096)
ok = data == b"\x5a" * 4096
res = comm.gather(ok, root=0)
if r == 0:
    print("python ranks see rank 0's malloc:", all(res))
comm.Barrier()
