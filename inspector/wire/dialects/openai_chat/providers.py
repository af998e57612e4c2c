"""Who speaks Chat Completions (and, the same provider, Responses): OpenAI, and the profiles of the
servers whose limits differ from api.openai.com's."""

from __future__ import annotations

from ...dialect import Dialect
from ...profiles import Profile
from ...violations import Severity
from .. import Provider, SDKSetting, header_auth
from .shape import NAMES

_DOTTED_NAME = NAMES.widened("a-zA-Z0-9_.-", "^[a-zA-Z0-9_.-]+$")

OPENAI = Provider(
    "openai", "api.openai.com", ("OPENAI_API_KEY",), header_auth("Authorization", "Bearer "),
    frozenset({"authorization"}),
    settings=(SDKSetting("OPENAI_BASE_URL", "/v1",
                         "openai SDK, openai-agents, pydantic-ai, LangChain's ChatOpenAI, LiteLLM openai/ models"),),
    route="https://api.openai.com",
    intercepts=("api.openai.com",),
)

# Azure OpenAI: one host per resource, the key in `api-key` (the openai SDK's AzureOpenAI with api_key;
# Entra ID tokens go as Bearer, which OpenAI's record already names), `?api-version=` on the deployment
# path (/openai/deployments/{deployment}/chat/completions), none on the v1 path (/openai/v1/...).
AZURE = Provider(
    "azure-openai", "", ("AZURE_OPENAI_API_KEY",), header_auth("api-key"), frozenset({"api-key"}),
    intercepts=("*.openai.azure.com", "*.cognitiveservices.azure.com"),
)
# Hosts that speak OpenAI's dialects for other providers, intercepted in proxy mode with OpenAI's.
COMPATIBLE_INTERCEPTS = ("openrouter.ai", "api.mistral.ai", "api.groq.com", "api.together.xyz", "api.deepseek.com",
                         "api.x.ai", "api.fireworks.ai", "api.cohere.com", "api.perplexity.ai")

# Other servers speaking OpenAI's dialects (their limits are the profiles below), intercepted in proxy
# mode with OpenAI's own host.
COMPATIBLE = Provider(
    "openai-compatible", "", (), None,
    intercepts=("openrouter.ai", "api.mistral.ai", "api.groq.com", "api.together.xyz", "api.deepseek.com", "api.x.ai",
                "api.fireworks.ai", "api.cohere.com", "api.perplexity.ai"),
)

_CHAT = Dialect.OPENAI_CHAT
# A deployment names its model: a request to its path may leave `model` out of the body, as crewAI's
# native Azure client does (crewAIInc/crewAI lib/crewai/tests/cassettes/agents/
# TestAzureNativeToolCalling.test_azure_agent_with_native_tool_calling.yaml, answered 200).
_DEPLOYMENT_PATH = r"^/openai/deployments/[^/]+/"
# api.openai.com's first: the default of both OpenAI dialects.
PROFILES = (
    Profile("openai", _CHAT, "api.openai.com (Chat Completions and Responses)", NAMES, call_id_max=40, max_tools=128),
    Profile("azure-openai", _CHAT, "Azure OpenAI: 40-char tool-call ids enforced; some "
            "deployments accept dots in names", _DOTTED_NAME, call_id_max=40,
            call_id_severity=Severity.ERROR, max_tools=128, description_severity=Severity.ERROR,
            hosts=r".+\.openai\.azure\.com|.+\.cognitiveservices\.azure\.com", paths=_DEPLOYMENT_PATH,
            relay_paths=r"^/openai/v1/", model_paths=_DEPLOYMENT_PATH),
    Profile("openrouter", _CHAT, "OpenRouter: 40-char tool-call ids enforced",
            NAMES, call_id_max=40, call_id_severity=Severity.ERROR,
            max_tools=128, routes_by_model=True, server_tool_prefix="openrouter:", published_schema=False,
            hosts=r"(.+\.)?openrouter\.ai"),
    Profile("openai-compatible", _CHAT, "strict compatible servers (DeepSeek, DashScope, "
            "vLLM): arguments must be JSON objects, content key present, tool_choice needs tools",
            NAMES, call_id_max=40, max_tools=128, strict_arguments=True,
            content_key_required=True, tool_choice_needs_tools=True, empty_tools_refused=True, own_item_ids=True,
            published_schema=False, hosts=r"api\.deepseek\.com|dashscope(-intl)?\.aliyuncs\.com"),
    Profile("mistral", _CHAT, "Mistral's chat API (api.mistral.ai): type defaults to "
            "function, tool_choice 'any', content chunks", NAMES, mistral=True,
            published_schema=False, hosts=r"api\.mistral\.ai"),
)
