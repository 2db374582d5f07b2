"""TurnEnvironment: what a turn works in, apart from the conversation it belongs to.

The settings and the model the person chose (:class:`SessionOptions`), the approval policy,
the folder's trust and what it governs (:class:`SessionTrust`), the project instructions,
loom.yaml's MCP servers, the kernel, the tools and the live notebook. The conversation
(:class:`~loom_jupyter.session.conversation.CoworkSession`) asks it to get ready once a turn
(:meth:`prepare`) and to put requests together; the agent loop and every other caller of
the tool pipeline (an outside agent's call, a delegation's sub-agents) take their gate and
their :class:`ToolContext` from here, so a tool runs the same whoever asked for it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from loom_jupyter.engine.agent import AgentLoop
from loom_jupyter.engine.gate import ToolGate
from loom_jupyter.session.folder_trust import SessionTrust
from loom_jupyter.session.instructions import Instructions, ProjectInstructions
from loom_jupyter.session.options import SessionOptions
from loom_jupyter.session.request import RequestAssembly
from loom_jupyter.session.servers import SessionServers
from loom_jupyter.skills import SkillSet
from loom_jupyter.tools.base import ToolContext
from loom_jupyter.trust import skills_for

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable
    from pathlib import Path

    from loom_jupyter.archive import Archive
    from loom_jupyter.engine.context import ContextWindow
    from loom_jupyter.mcp.servers import McpServers, ServerStatus
    from loom_jupyter.models.base import Model
    from loom_jupyter.readers import ProjectReader
    from loom_jupyter.session.shape import RequestShape
    from loom_jupyter.settings import Settings
    from loom_jupyter.tools.approval import ApprovalPolicy, Asker
    from loom_jupyter.tools.base import Delegator, KernelBridge, NotebookDocument
    from loom_jupyter.tools.registry import ToolRegistry
    from loom_jupyter.trust import FolderTrust, TrustAnswer, TrustDecision

__all__ = ["TurnEnvironment"]


class TurnEnvironment:
    """Settings, trust, instructions, MCP, kernel, tools and policy for one notebook's turns."""

    def __init__(
        self,
        archive: Archive,
        *,
        notebook_path: Path,
        settings: Settings,
        model: Model,
        kernel: KernelBridge,
        tools: ToolRegistry,
        policy: ApprovalPolicy,
        window: ContextWindow,
    ) -> None:
        self.archive = archive
        self.notebook_path = notebook_path
        self.kernel = kernel
        self.tools = tools
        self.options = SessionOptions(settings, model, policy, window, notebook=str(notebook_path))
        self.instructions = ProjectInstructions(
            notebook_path, max_chars=settings.instructions_max_chars
        )
        self.requests = RequestAssembly(window, self.options, self.instructions)
        self.servers = SessionServers(tools, window)  # loom.yaml's: bind loads them
        self.folder = SessionTrust(notebook_path, self.options, self.instructions, self.servers)
        self.delegator: Delegator | None = None  # set by loom_jupyter.orchestrator.attach
        self.document: NotebookDocument | None = None  # the live notebook (set by the host)

    def bind(self, trust: FolderTrust) -> None:
        """Take the folder's trust as the session opens: its instructions and servers."""
        self.folder.current = trust
        self.instructions.bind(trust)
        self.servers.load(
            self.options.settings, cwd=self.notebook_path.parent, trusted=trust.trusted
        )

    @property
    def settings(self) -> Settings:
        """The settings in force (a magic, the folder's trust change them)."""
        return self.options.settings

    @property
    def policy(self) -> ApprovalPolicy:
        """The approval policy (:meth:`SessionOptions.set_approval`)."""
        return self.options.policy

    @property
    def mcp(self) -> McpServers | None:
        """loom.yaml's MCP servers (``None``: it names none); :attr:`servers` runs them."""
        return self.servers.servers

    @property
    def skills(self) -> SkillSet:
        """The skills the next request's system prompt lists (found once a turn)."""
        return self.requests.skills

    def find_skills(self) -> SkillSet:
        """Every skill found now: the person's, and the project's from the bytes the folder's
        trust read (usable only while it is trusted)."""
        trust = self.folder.current
        if trust is None:
            return SkillSet()
        return skills_for(trust)

    # -- a turn ---------------------------------------------------------------

    async def prepare(self) -> list[str]:
        """Ready for the next turn: the folder's trust, the project instructions and the
        MCP servers as they are now; returns the notices the person should see."""
        notices = await self.folder.check()  # a trust decision or an edit, once a turn
        skills = self.find_skills()  # the person's read now, the project's as trusted
        notices += self.requests.load_instructions(skills)  # edits are picked up once a turn
        notices += await self.servers.start()  # the first turn starts the MCP servers
        return notices

    def agent_loop(self) -> AgentLoop:
        """The agent loop of one turn, with the tools, policy and settings in force now."""
        return AgentLoop(
            model=self.options.model,
            registry=self.tools,
            policy=self.policy,
            settings=self.settings,
        )

    def gate(self, asker: Asker) -> ToolGate:
        """The one gate a call from outside the agent loop passes (approval by ``asker``)."""
        return ToolGate(registry=self.tools, policy=self.policy, asker=asker)

    def tool_context(
        self, session_id: str, asked_at: int, summary: Callable[[], Awaitable[str]]
    ) -> ToolContext:
        """What a tool call answering turn ``asked_at`` may use (any caller's: the gate)."""
        return ToolContext(
            notebook_dir=self.notebook_path.parent,
            settings=self.settings,
            kernel=self.kernel,
            notebook_path=self.notebook_path,
            archive=self.archive,
            session_id=session_id,
            session_summary=summary,
            delegator=self.delegator,
            project=_project_reader(self.notebook_path, self.settings),
            asked_at=asked_at,
            document=self.document,
            approval_mode=self.policy.mode,
            executions=self.archive,
            skills=self.skills,
        )

    def request_shape(self) -> RequestShape:
        """How a delegation's sub-agents ask: the system prompt (project instructions
        included, as they are now), max tokens, thinking and effort."""
        return self.requests.shape()

    # -- between turns --------------------------------------------------------

    async def trust_folder(
        self, decision: TrustDecision, *, shown: str | None, with_approval: bool, running: bool
    ) -> TrustAnswer:
        """Record the person's decision about the folder as it was shown to them (``shown``:
        that view's digest); in force from the next turn (at once when none ``running``)."""
        answer = self.folder.decide(decision, shown=shown, with_approval=with_approval)
        if answer.recorded and not running:
            await self.folder.apply(answer.trust)
        return answer

    async def project_instructions(self, *, running: bool) -> Instructions:
        """The project instructions as the next turn sends them."""
        if not running:
            await self.folder.refresh()
        return self.instructions.current()

    async def mcp_status(self, *, restart: str | None, running: bool) -> tuple[ServerStatus, ...]:
        """The MCP servers, started first if they were not; ``restart`` starts that one
        again. Between turns their tools join the next request."""
        if self.mcp is None:
            return ()
        if not running:
            await self.folder.refresh()  # trusted since the last turn: its servers may start
        return await self.servers.status(restart=restart, attach=not running)

    async def close(self) -> None:
        """Stop the MCP servers."""
        await self.servers.close()


def _project_reader(notebook: Path, settings: Settings) -> ProjectReader:
    """Every notebook archive of the notebook's project, read-only (recall scope all_notebooks)."""
    from loom_jupyter.archive.project import ProjectArchives, project_root

    return ProjectArchives(project_root(notebook), busy_timeout=settings.busy_timeout_seconds)
