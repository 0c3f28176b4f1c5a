import PushRelayCore
import PushRelayHTTP

/// How Home Assistant's endpoints read a request body (shared by the router and the NIO fast path).
enum HomeAssistantRequest {
    /// The notification in a parsed body: 403 without a push token, 400 for a malformed one.
    static func notification(_ body: JSONValue) throws(APIError) -> HANotification {
        do {
            return try HANotification(body: body)
        } catch {
            switch error {
            case .missingPushToken:
                try reject403()
            case .malformedBody, .wrongType, .tooLong:
                throw APIError(.badRequest, "InvalidRequest", error.description, fields: ["errorMessage": .string(error.description)])
            }
        }
    }

    /// A body as Home Assistant's endpoints take it: 400 unless it is JSON.
    static func parse(_ bytes: some Collection<UInt8>) throws(APIError) -> JSONValue {
        try JSONBody.parse(bytes)
    }

    static func reject403() throws(APIError) -> Never {
        let message = HARequestError.missingPushToken.description
        throw APIError(.forbidden, "MissingToken", message, fields: ["errorMessage": .string("You did not send a token!")])
    }
}
