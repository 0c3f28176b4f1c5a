import HTTPTypes
import PushRelayCore
import PushRelayHTTP
import PushRelayMatrixGateway
import Testing

@testable import PushRelayServer

/// `http.max_body_bytes`: one check and one 413 per path, whichever path of the server reads the body.
@Suite struct BodyLimitTests {
    static let limit = BodyLimit(
        maxBytes: 10,
        answers: ["/own": { APIError(.contentTooLarge, "OwnTooLarge", "past \($0) bytes") }]
    )

    @Test func aBodyUpToTheLimitPasses() {
        #expect(Self.limit.allows(0))
        #expect(Self.limit.allows(10))
        #expect(!Self.limit.allows(11))
    }

    @Test func aDeclaredLengthIsCheckedAndAChunkedBodyDeclaresNone() {
        #expect(!Self.limit.declaresTooMuch([.contentLength: "10"]))
        #expect(Self.limit.declaresTooMuch([.contentLength: "11"]))
        #expect(!Self.limit.declaresTooMuch([.transferEncoding: "chunked"]))
        #expect(!Self.limit.declaresTooMuch([.contentLength: "not a number"]))
    }

    @Test func theAnswerIsTheRoutesOwnOrPayloadTooLargeAndEndsTheConnection() {
        let generic = Self.limit.tooLarge(path: "/api/sendPush/android/v1")
        #expect(generic.status == .contentTooLarge)
        #expect(generic.errorType == "PayloadTooLarge")
        #expect(generic.message == APIError.bodyTooLargeMessage(limit: 10))
        #expect(generic.headers[.connection] == "close")

        let own = Self.limit.tooLarge(path: "/own")
        #expect(own.errorType == "OwnTooLarge")
        #expect(own.message == "past 10 bytes")
        #expect(own.headers[.connection] == "close")
    }

    @Test func matrixAnswersInItsOwnForm() {
        typealias Matrix = MatrixRoutes<PushRelayRequestContext>
        let limit = BodyLimit(maxBytes: 10, answers: [Matrix.path: Matrix.bodyTooLarge])
        let error = limit.tooLarge(path: Matrix.path)
        #expect(error.body == Matrix.bodyTooLarge(limit: 10).body)
        #expect(error.fields["errcode"] == "M_TOO_LARGE")
    }
}
