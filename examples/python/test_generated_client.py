"""A client generated from openapi/openapi.json by openapi-python-client, made
during the run (never committed), creates and fetches a generation."""

from __future__ import annotations

import importlib
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from mediagen_mock import World

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def mediagen_client(tmp_path_factory: pytest.TempPathFactory) -> ModuleType:
    here = Path(sys.executable).parent / "openapi-python-client"
    generator = str(here) if here.exists() else shutil.which("openapi-python-client")
    assert generator, "openapi-python-client is not installed (see requirements.txt)"
    out = tmp_path_factory.mktemp("generated")
    subprocess.run(
        [
            generator,
            "generate",
            "--path", str(ROOT / "openapi" / "openapi.json"),
            "--config", str(ROOT / "openapi" / "openapi-python-client.yaml"),
            "--output-path", str(out / "mediagen_client"),
            "--meta", "none",
            "--fail-on-warning",
        ],
        check=True,
    )  # fmt: skip
    sys.path.insert(0, str(out))
    return importlib.import_module("mediagen_client")


def test_the_generated_client_creates_and_fetches_a_generation(
    mediagen_mock: World, mediagen_client: ModuleType
) -> None:
    from mediagen_client.api.generations import create_generation, get_generation
    from mediagen_client.models import CreateGenerationRequest, GenerationStatus

    client = mediagen_client.AuthenticatedClient(
        base_url=mediagen_mock.base_url,
        token=mediagen_mock.api_key,
        httpx_args={"trust_env": False},
    )
    answer = create_generation.sync_detailed(
        client=client,
        body=CreateGenerationRequest(model_slug="flux-schnell", prompt="a lighthouse"),
        idempotency_key="example-generated-client-1",
    )
    assert answer.status_code == 202
    created = answer.parsed
    assert created.status == GenerationStatus.PENDING

    mediagen_mock.advance_clock(30)
    generation = get_generation.sync(id=created.id, client=client)

    assert generation.status == GenerationStatus.SUCCEEDED
    assert generation.id == created.id
    assert generation.output_urls
