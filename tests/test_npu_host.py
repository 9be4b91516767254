"""npu_host: while installed (under `ascrun exec` and the pytest plugin), torch's device "npu" is the
host; uninstalled, torch is as it was; where torch_npu is importable, torch is left alone."""
import subprocess
import sys

import pytest

from ascrun.compat import npu_host

pytestmark = pytest.mark.unit

torch = pytest.importorskip("torch")
NO_NPU = "device type at start of device string: npu"  # the end of torch's error for "npu" without torch_npu


def test_device_npu_names_the_host_while_installed():
    uninstall = npu_host.install()
    try:
        x = torch.randn(8, dtype=torch.float16, device="npu")
        assert (x.device, x.dtype) == (torch.device("cpu"), torch.float16)
        for spelling in (("npu",), ("npu:1",), ("npu", 0)):
            assert torch.device(*spelling) == torch.device("cpu")
        assert torch.device(type="npu", index=0) == torch.device("cpu")
        assert torch.device("cuda:1") != torch.device("cpu")  # other devices are untouched
        assert torch.zeros(3, device=torch.device("npu:0")).device.type == "cpu"
        assert torch.full((2,), 7, dtype=torch.int16, device="npu:0").tolist() == [7, 7]
        assert isinstance(torch.randint(-100, 99, (), dtype=torch.int32, device="npu").item(), int)
        assert x.to("npu") is x and x.to(device="npu") is x and x.npu() is x and x.cpu() is x
        y = x.to("npu:0", torch.float32)
        assert (y.device.type, y.dtype) == ("cpu", torch.float32) and torch.equal(y, x.float())
        assert x.new_ones(4, device="npu").device.type == "cpu"
    finally:
        uninstall()
    with pytest.raises(RuntimeError, match=NO_NPU):
        torch.device("npu")
    assert not hasattr(torch.Tensor, "npu")


def test_left_alone_where_torch_npu_is_importable(tmp_path, monkeypatch):
    (tmp_path / "torch_npu").mkdir()
    (tmp_path / "torch_npu" / "__init__.py").write_text("")  # only its presence is looked at
    monkeypatch.syspath_prepend(str(tmp_path))
    uninstall = npu_host.install()
    try:
        with pytest.raises(RuntimeError, match=NO_NPU):
            torch.randn(2, device="npu")
        assert not hasattr(torch.Tensor, "npu")
    finally:
        uninstall()


@pytest.mark.kernel
def test_torch_is_mapped_when_the_code_imports_it_not_before():
    code = ("import sys\nfrom ascrun.compat import npu_host\nuninstall = npu_host.install()\n"
            "assert 'torch' not in sys.modules\nimport torch\n"
            "print(torch.randn(3, device='npu').device, torch.__spec__.loader is torch.__loader__)\n"
            "uninstall()\nimport torch.nn\ntry:\n    torch.device('npu')\nexcept RuntimeError as e:\n    print(e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    mapped, after = out.stdout.splitlines()
    assert mapped == "cpu True"
    assert after.endswith(NO_NPU)
