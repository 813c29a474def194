package otelexport

import "go.opentelemetry.io/otel/attribute"

// The attribute keys vigil sends, in one place. The gen_ai.* keys are the
// OpenTelemetry GenAI semantic conventions (status: development; the Go
// semconv package stopped carrying them after v1.41.0, so they are
// defined here, with the names of the conventions' registry). The vigil.*
// keys are vigil's own: what a run store knows that the conventions have
// no word for. docs/cli.md lists every key with its meaning.

// GenAI semantic conventions.
const (
	keyOperationName       = attribute.Key("gen_ai.operation.name")
	keyProviderName        = attribute.Key("gen_ai.provider.name")
	keyConversationID      = attribute.Key("gen_ai.conversation.id")
	keyAgentID             = attribute.Key("gen_ai.agent.id")
	keyAgentName           = attribute.Key("gen_ai.agent.name")
	keyAgentDescription    = attribute.Key("gen_ai.agent.description")
	keyRequestModel        = attribute.Key("gen_ai.request.model")
	keyUsageInputTokens    = attribute.Key("gen_ai.usage.input_tokens")
	keyUsageOutputTokens   = attribute.Key("gen_ai.usage.output_tokens")
	keyUsageCacheRead      = attribute.Key("gen_ai.usage.cache_read.input_tokens")
	keyUsageCacheCreation  = attribute.Key("gen_ai.usage.cache_creation.input_tokens")
	keyUsageReasoning      = attribute.Key("gen_ai.usage.reasoning.output_tokens")
	keyResponseFinish      = attribute.Key("gen_ai.response.finish_reasons")
	keyResponseFirstChunk  = attribute.Key("gen_ai.response.time_to_first_chunk")
	keyToolName            = attribute.Key("gen_ai.tool.name")
	keyToolCallID          = attribute.Key("gen_ai.tool.call.id")
	keyToolType            = attribute.Key("gen_ai.tool.type")
	keyToolCallArguments   = attribute.Key("gen_ai.tool.call.arguments")
	keyToolCallResult      = attribute.Key("gen_ai.tool.call.result")
	keyInputMessages       = attribute.Key("gen_ai.input.messages")
	keyOutputMessages      = attribute.Key("gen_ai.output.messages")
	keyErrorType           = attribute.Key("error.type") // the general conventions' (stable)
	keyServiceName         = attribute.Key("service.name")
	operationChat          = "chat"
	operationInvokeAgent   = "invoke_agent"
	operationExecuteTool   = "execute_tool"
	toolTypeFunction       = "function"
	errorTypeOther         = "_OTHER"
	instrumentationScope   = "github.com/vigil-run/vigil/otelexport"
	instrumentationVersion = "1" // the mapping's version: it changes when spans would
)

// vigil's own keys.
const (
	keyStoreFormat = attribute.Key("vigil.store.format")

	keyRunID       = attribute.Key("vigil.run.id")
	keyRunParentID = attribute.Key("vigil.run.parent_id")
	keyRunRootID   = attribute.Key("vigil.run.root_id")
	keyRunDepth    = attribute.Key("vigil.run.depth")
	keyRunStatus   = attribute.Key("vigil.run.status")
	keyRunOutcome  = attribute.Key("vigil.run.outcome")
	keyRunSuccess  = attribute.Key("vigil.run.success")
	keyRunGoal     = attribute.Key("vigil.run.goal")
	keyAgentSteps  = attribute.Key("vigil.agent.steps")
	keyAgentTokens = attribute.Key("vigil.agent.tokens")

	keyStepNumber   = attribute.Key("vigil.step.number")
	keyStepDecision = attribute.Key("vigil.step.decision")
	keyCallAttempt  = attribute.Key("vigil.call.attempt")
	keyCallTotal    = attribute.Key("vigil.call.total_tokens")
	keyCallFailure  = attribute.Key("vigil.call.failure")

	keyContextEstimated = attribute.Key("vigil.context.estimated_tokens")
	keyContextReported  = attribute.Key("vigil.context.reported_tokens")
	keyContextGap       = attribute.Key("vigil.context.gap_tokens")
	keyContextDrift     = attribute.Key("vigil.context.drift")
	keyContextTurns     = attribute.Key("vigil.context.turns")
	keyContextMissing   = attribute.Key("vigil.context.missing_turns")

	keyRequestKind      = attribute.Key("vigil.request.kind")
	keyRequestID        = attribute.Key("vigil.request.id")
	keyRequestStep      = attribute.Key("vigil.request.step")
	keyRequestDecision  = attribute.Key("vigil.request.decision")
	keyRequestDecidedBy = attribute.Key("vigil.request.decided_by")
	keyRequestWaitMS    = attribute.Key("vigil.request.wait_ms")
	keyRequestResumed   = attribute.Key("vigil.request.resumed")
	keyRequestAct       = attribute.Key("vigil.request.act")
	keyRequestTarget    = attribute.Key("vigil.request.target")
	keyRequestContent   = attribute.Key("vigil.request.content")
	keyRequestQuestion  = attribute.Key("vigil.request.question")
	keyRequestAnswer    = attribute.Key("vigil.request.answer")
	keyRequestPlanSteps = attribute.Key("vigil.request.plan_steps")
	keyRequestPlan      = attribute.Key("vigil.request.plan")
	keyRequestCorrect   = attribute.Key("vigil.request.correction")

	keySpawnDetail = attribute.Key("vigil.spawn.detail")
)

// Span event names.
const (
	eventApproval     = "vigil.approval"
	eventQuestion     = "vigil.question"
	eventPlan         = "vigil.plan"
	eventSpawnRefused = "vigil.spawn_refused"
)
