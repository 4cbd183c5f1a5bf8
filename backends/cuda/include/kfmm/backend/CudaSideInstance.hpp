// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_BACKEND_CUDA_SIDE_INSTANCE_HPP
#define KFMM_BACKEND_CUDA_SIDE_INSTANCE_HPP

// Included by kfmm/detail/SideInstance.hpp when Kokkos has CUDA: the side instance is a
// Kokkos::Cuda on a stream of the process's own, ordered against the caller's stream by an
// event, so that neither host waits nor the device idles between the two chains.
//
// Its stream has the device's highest priority: the block scheduler then starts a block of
// the side chain (the far field's translations, a few short kernels one after another)
// whenever a multiprocessor has room, and the caller's long kernel (the near field) fills the
// rest. At the same priority the near field's blocks, queued first, would take every
// multiprocessor until their last one started. The stream does not block: one that did would
// wait for, and hold up, work on the legacy default stream, which the caller's instance may
// use.

#include <Kokkos_Core.hpp>

#include <cuda_runtime.h>

#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>

namespace kfmm::detail
{

/// Throws when a CUDA runtime call failed.
inline void requireCuda(cudaError_t status, char const *call)
{
  if (status != cudaSuccess)
    throw std::runtime_error(std::string("kfmm: ") + call +
                             " failed: " + cudaGetErrorString(status));
}

/// The process's side stream, its Kokkos::Cuda instance and the event that orders it against
/// other streams. Made at the first use after Kokkos' initialisation, released when Kokkos
/// finalises (a Kokkos instance must not outlive Kokkos), and made again at a use after a
/// new initialisation. Solvers on several host threads share it: their side chains then run
/// one after another.
class CudaSideStream
{
public:
  static CudaSideStream &shared()
  {
    static CudaSideStream *const side = new CudaSideStream; // lives as long as the process
    return *side;
  }

  Kokkos::Cuda instance()
  {
    std::lock_guard<std::mutex> lock(_mutex);
    if (!_instance)
    {
      int least = 0;
      int greatest = 0;
      requireCuda(cudaDeviceGetStreamPriorityRange(&least, &greatest),
                  "cudaDeviceGetStreamPriorityRange");
      requireCuda(cudaStreamCreateWithPriority(&_stream, cudaStreamNonBlocking, greatest),
                  "cudaStreamCreateWithPriority");
      requireCuda(cudaEventCreateWithFlags(&_event, cudaEventDisableTiming),
                  "cudaEventCreateWithFlags");
      _instance = std::make_unique<Kokkos::Cuda>(_stream);
      Kokkos::push_finalize_hook([this] { release(); });
    }
    return *_instance;
  }

  /// Work queued on `later` from now on waits for the work queued on `earlier` so far: the
  /// event is recorded on `earlier`, and `later` waits for that record (cudaStreamWaitEvent
  /// takes the event's latest record when it is called, so one event serves every order).
  void order(cudaStream_t earlier, cudaStream_t later)
  {
    std::lock_guard<std::mutex> lock(_mutex);
    requireCuda(cudaEventRecord(_event, earlier), "cudaEventRecord");
    requireCuda(cudaStreamWaitEvent(later, _event, 0), "cudaStreamWaitEvent");
  }

private:
  CudaSideStream() = default;

  void release()
  {
    std::lock_guard<std::mutex> lock(_mutex);
    if (!_instance)
      return;
    _instance->fence();
    _instance.reset();
    // Kokkos is finalising: errors can only be reported, and there is nothing left to do.
    cudaEventDestroy(_event);
    cudaStreamDestroy(_stream);
  }

  std::mutex _mutex;
  std::unique_ptr<Kokkos::Cuda> _instance;
  cudaStream_t _stream = nullptr;
  cudaEvent_t _event = nullptr;
};

template <class ExecutionSpace>
class SideInstance;

template <>
class SideInstance<Kokkos::Cuda>
{
public:
  SideInstance(Kokkos::Cuda const &caller, bool enabled)
      : _caller(caller), _side(enabled ? CudaSideStream::shared().instance() : caller)
  {
    // The side stream is on the device Kokkos initialised; a caller's instance on another
    // device (newer Kokkos allows several) runs everything itself.
    if (_side.cuda_device() != _caller.cuda_device())
      _side = _caller;
  }

  Kokkos::Cuda const &space() const { return _side; }

  bool concurrent() const { return _side.cuda_stream() != _caller.cuda_stream(); }

  void follow() const
  {
    if (concurrent())
      CudaSideStream::shared().order(_caller.cuda_stream(), _side.cuda_stream());
  }

  void join() const
  {
    if (concurrent())
      CudaSideStream::shared().order(_side.cuda_stream(), _caller.cuda_stream());
  }

private:
  Kokkos::Cuda _caller;
  Kokkos::Cuda _side;
};

} // namespace kfmm::detail

#endif
