"""Streams and events on tessera: torch.Stream, torch.Event, torch.tessera's
wrappers, the current stream, waits, timing and record_stream."""

import threading

import pytest
import torch

import torch_tessera


def two_devices():
    if torch.tessera.device_count() < 2:
        pytest.skip("needs two tessera devices")


def test_default_stream_is_current(tessera):
    current = torch.tessera.current_stream()
    assert current.device_type == torch.accelerator.current_stream().device_type
    assert current.device == torch.device("tessera:0")
    assert current.stream_id == 0
    assert current == torch.tessera.default_stream()
    assert current == torch.accelerator.current_stream("tessera:0")


def test_new_streams_are_distinct_tessera_streams(tessera):
    a = torch.Stream(device="tessera")
    b = torch.Stream(device="tessera:0")
    c = torch.tessera.Stream()
    assert isinstance(c, torch.Stream)
    ids = {a.stream_id, b.stream_id, c.stream_id, 0}
    assert len(ids) == 4
    for s in (a, b, c):
        assert s.device == torch.device("tessera:0")
        assert s.query()
        s.synchronize()


def test_stream_on_a_missing_device_is_an_index_error(tessera):
    n = torch.tessera.device_count()
    with pytest.raises(IndexError, match=f"tessera:{n} does not exist"):
        torch.Stream(device=f"tessera:{n}")


def test_stream_context_sets_and_restores_the_current_stream(tessera):
    s = torch.tessera.Stream()
    with torch.tessera.stream(s):
        assert torch.tessera.current_stream() == s
        assert torch.accelerator.current_stream() == s
    assert torch.tessera.current_stream() == torch.tessera.default_stream()
    with s:  # torch.Stream's own context manager
        assert torch.tessera.current_stream() == s
    assert torch.tessera.current_stream().stream_id == 0
    with torch.tessera.stream(None):
        assert torch.tessera.current_stream().stream_id == 0


def test_set_stream(tessera):
    s = torch.Stream(device="tessera")
    try:
        torch.tessera.set_stream(s)
        assert torch.tessera.current_stream() == s
    finally:
        torch.tessera.set_stream(torch.tessera.default_stream())
    assert torch.tessera.current_stream().stream_id == 0


def test_stream_context_switches_device():
    two_devices()
    s1 = torch.Stream(device="tessera:1")
    with torch.tessera.stream(s1):
        assert torch.tessera.current_device() == 1
        assert torch.tessera.current_stream() == s1
        x = torch.ones(2, device="tessera")
    assert torch.tessera.current_device() == 0
    assert torch.tessera.current_stream(1).stream_id == 0
    assert x.device == torch.device("tessera:1")


def test_allocations_follow_the_current_stream(tessera):
    # The caching allocator keeps free blocks per stream: a block freed on
    # stream s is reused on s, not on the default stream.
    s = torch.Stream(device="tessera")
    with torch.tessera.stream(s):
        a = torch.empty(1000, device=tessera)
        address = a.data_ptr()
        del a
    b = torch.empty(1000, device=tessera)
    assert b.data_ptr() != address
    with torch.tessera.stream(s):
        c = torch.empty(1000, device=tessera)
        assert c.data_ptr() == address


def test_work_on_a_side_stream_gives_the_same_values(tessera):
    x = torch.arange(12.0).reshape(3, 4)
    s = torch.Stream(device="tessera")
    with torch.tessera.stream(s):
        y = x.to(tessera) * 3 + 1
    torch.tessera.current_stream().wait_stream(s)
    torch.testing.assert_close(y.cpu(), x * 3 + 1)


def test_event_record_query_synchronize(tessera):
    e = torch.Event(device="tessera")
    assert e.query()  # never recorded
    x = torch.ones(100, device=tessera) + 1
    e.record()
    e.synchronize()
    assert e.query()
    assert e.device == torch.device("tessera:0")
    torch.testing.assert_close(x.cpu(), torch.full((100,), 2.0))


def test_tessera_event_wrapper(tessera):
    e = torch.tessera.Event(enable_timing=True)
    assert isinstance(e, torch.Event)
    s = torch.tessera.Stream()
    e.record(s)
    e.wait(torch.tessera.current_stream())
    e.synchronize()
    assert e.query()


def test_elapsed_time(tessera):
    start = torch.Event(device="tessera", enable_timing=True)
    end = torch.Event(device="tessera", enable_timing=True)
    start.record()
    x = torch.ones(256, 256, device=tessera)
    for _ in range(3):
        x = x * 1.0001
    end.record()
    end.synchronize()
    ms = start.elapsed_time(end)
    assert isinstance(ms, float) and ms >= 0.0
    # Later events are later: the interval to a third event is at least as long.
    third = torch.Event(device="tessera", enable_timing=True)
    third.record()
    third.synchronize()
    assert start.elapsed_time(third) >= ms


def test_elapsed_time_needs_timing_events(tessera):
    a = torch.Event(device="tessera")
    b = torch.Event(device="tessera")
    a.record()
    b.record()
    with pytest.raises(ValueError, match="enable_timing=True"):
        a.elapsed_time(b)


def test_elapsed_time_needs_recorded_events(tessera):
    a = torch.Event(device="tessera", enable_timing=True)
    b = torch.Event(device="tessera", enable_timing=True)
    with pytest.raises(ValueError, match="recorded"):
        a.elapsed_time(b)


def test_wait_event_and_wait_stream(tessera):
    producer = torch.Stream(device="tessera")
    consumer = torch.Stream(device="tessera")
    with torch.tessera.stream(producer):
        x = torch.full((64,), 5.0, device=tessera)
        done = producer.record_event()
    assert isinstance(done, torch.Event)
    consumer.wait_event(done)
    consumer.wait_stream(producer)
    with torch.tessera.stream(consumer):
        y = x + 1
    consumer.synchronize()
    assert consumer.query() and producer.query()
    torch.testing.assert_close(y.cpu(), torch.full((64,), 6.0))


def test_record_stream_is_a_native_kernel(tessera):
    x = torch.arange(10.0, device=tessera)
    s = torch.Stream(device="tessera")
    # As on CUDA, a side stream sees the default stream's work only after
    # waiting for it (Vulkan and CUDA devices run streams concurrently).
    s.wait_stream(torch.tessera.current_stream())
    with torch.tessera.stream(s):
        y = x * 2
    x.record_stream(s)
    x[2:5].record_stream(s)  # a view records its storage
    torch.empty(0, device=tessera).record_stream(s)  # no block: nothing to do
    assert not any("record_stream" in op for op in torch_tessera.fallback_stats())
    torch.tessera.current_stream().wait_stream(s)  # y.cpu() copies on the default stream
    torch.testing.assert_close(y.cpu(), torch.arange(10.0) * 2)
    torch.testing.assert_close(x.cpu(), torch.arange(10.0))


def test_record_stream_then_free_and_reallocate(tessera):
    s = torch.Stream(device="tessera")
    x = torch.ones(1 << 16, device=tessera)
    s.wait_stream(torch.tessera.current_stream())
    with torch.tessera.stream(s):
        y = x + 1
    x.record_stream(s)
    before = torch.tessera.memory_allocated()
    del x
    assert torch.tessera.memory_allocated() < before
    z = torch.zeros(1 << 16, device=tessera)
    torch.tessera.synchronize()
    torch.testing.assert_close(y.cpu(), torch.full((1 << 16,), 2.0))
    torch.testing.assert_close(z.cpu(), torch.zeros(1 << 16))


def test_record_stream_rejects_a_stream_of_another_device_type(tessera):
    x = torch.ones(4, device=tessera)
    cpu_stream = torch.Stream(stream_id=0, device_index=0, device_type=0)  # DeviceType::CPU
    with pytest.raises(RuntimeError, match="record_stream: the tensor is on tessera:0 but the "
                                           "stream is a cpu stream"):
        x.record_stream(cpu_stream)


def test_record_stream_rejects_a_stream_of_another_tessera_device():
    two_devices()
    x = torch.ones(4, device="tessera:0")
    with pytest.raises(RuntimeError, match="but the stream is on tessera:1"):
        x.record_stream(torch.Stream(device="tessera:1"))


def test_streams_of_two_devices_are_independent():
    two_devices()
    s0 = torch.Stream(device="tessera:0")
    s1 = torch.Stream(device="tessera:1")
    with torch.tessera.stream(s1):
        assert torch.tessera.current_stream(0).stream_id == 0
    with torch.tessera.stream(s0):
        assert torch.tessera.current_stream(1).stream_id == 0
    e = torch.Event(device="tessera:1")
    e.record(s1)
    e.synchronize()
    assert e.query()


def test_current_stream_and_device_are_per_thread(tessera):
    seen = []
    s = torch.Stream(device="tessera")
    with torch.tessera.stream(s):
        worker = threading.Thread(target=lambda: seen.append(
            (torch.tessera.current_device(), torch.tessera.current_stream().stream_id)))
        worker.start()
        worker.join()
        assert torch.tessera.current_stream() == s
    assert seen == [(0, 0)]
