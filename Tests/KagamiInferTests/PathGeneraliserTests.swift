@testable import KagamiInfer
import Testing

/// Concrete paths into templates, on hand-made samples.
@Suite struct PathGeneraliserTests {
    func templates(_ paths: [String], hints: [String] = [], maximum: Int = 1000) throws -> [String: String] {
        let generaliser = PathGeneraliser(hints: try hints.map { try PathHint(parsing: $0) }, maximumTemplates: maximum)
        return generaliser.generalise(paths).matches.mapValues(\.template.description)
    }

    @Test func valuesBecomeVariablesNamedAfterTheirCollection() throws {
        let result = try templates([
            "/users/123", "/users/8f14e45f-ceea-467f-a0e6-0f6c2d8e1c2a/posts", "/items/c1a2b3d4e5f6",
            "/reports/2026-11-24", "/members/ann@example.com", "/categories/7", "/tokens/usr_9xK2qLm4",
            "/addresses/12", "/people/5",
        ])
        #expect(result["/users/123"] == "/users/{userId}")
        #expect(result["/users/8f14e45f-ceea-467f-a0e6-0f6c2d8e1c2a/posts"] == "/users/{userId}/posts")
        #expect(result["/items/c1a2b3d4e5f6"] == "/items/{itemId}")
        #expect(result["/reports/2026-11-24"] == "/reports/{reportDate}")
        #expect(result["/members/ann@example.com"] == "/members/{memberEmail}")
        #expect(result["/categories/7"] == "/categories/{categoryId}")
        #expect(result["/tokens/usr_9xK2qLm4"] == "/tokens/{tokenId}")
        #expect(result["/addresses/12"] == "/addresses/{addressId}")
        #expect(result["/people/5"] == "/people/{personId}")
    }

    @Test func apiVersionsAndWordsStayLiteral() throws {
        let result = try templates(["/api/v1/users/42", "/api/v2.1/status", "/2.0/repositories/9", "/oauth2/token", "/sha256/abc", "/v1/health"])
        #expect(result["/api/v1/users/42"] == "/api/v1/users/{userId}")
        #expect(result["/api/v2.1/status"] == "/api/v2.1/status")
        #expect(result["/2.0/repositories/9"] == "/2.0/repositories/{repositoryId}")
        #expect(result["/oauth2/token"] == "/oauth2/token")
        #expect(result["/v1/health"] == "/v1/health")
    }

    @Test func aSmallNumberThatNeverChangesWhilePathsBelowDoIsLiteral() throws {
        let result = try templates(["/stream/0/posts/12", "/stream/0/posts/13", "/stream/0/posts", "/users/7"])
        #expect(result["/stream/0/posts/12"] == "/stream/0/posts/{postId}")
        #expect(result["/stream/0/posts"] == "/stream/0/posts")
        // One id seen once stays a variable.
        #expect(result["/users/7"] == "/users/{userId}")
    }

    @Test func nestedVariablesAreNamedApart() throws {
        let result = try templates(["/users/1/posts/2", "/orgs/5/9"])
        #expect(result["/users/1/posts/2"] == "/users/{userId}/posts/{postId}")
        #expect(result["/orgs/5/9"] == "/orgs/{orgId}/{id}")
    }

    @Test func siblingWordsWithTheSameShapeBelowCollapse() throws {
        let result = try templates([
            "/users/42/posts", "/users/jake/posts", "/users/ann/posts",
            "/profiles/alice/follow", "/profiles/bob/follow", "/profiles/carol/follow",
        ])
        #expect(result["/users/jake/posts"] == "/users/{userId}/posts")
        #expect(result["/users/ann/posts"] == "/users/{userId}/posts")
        #expect(result["/profiles/bob/follow"] == "/profiles/{profileId}/follow")
    }

    @Test func aWordBesideIdsWithADifferentShapeStays() throws {
        let result = try templates(["/pets/1", "/pets/2/photos", "/pets/findByStatus", "/articles/feed", "/articles/a1b2c3d4/comments"])
        #expect(result["/pets/findByStatus"] == "/pets/findByStatus")
        #expect(result["/pets/1"] == "/pets/{petId}")
        #expect(result["/articles/feed"] == "/articles/feed")
        #expect(result["/articles/a1b2c3d4/comments"] == "/articles/{articleId}/comments")
    }

    @Test func twoWordSiblingsStayLiteral() throws {
        let result = try templates(["/account/settings/email", "/account/profile/email"])
        #expect(result["/account/settings/email"] == "/account/settings/email")
        #expect(result["/account/profile/email"] == "/account/profile/email")
    }

    @Test func hintsWinAndAChangedHintReinfersFromTheSamePaths() throws {
        let paths = ["/repos/apple/swift/issues/3", "/repos/swiftlang/swift-nio/issues/12", "/repos/apple/swift"]
        let inferred = try templates(paths)
        #expect(inferred["/repos/apple/swift/issues/3"] != "/repos/{owner}/{repo}/issues/{issueId}")
        let hinted = try templates(paths, hints: ["/repos/{owner}/{repo}"])
        #expect(hinted["/repos/apple/swift/issues/3"] == "/repos/{owner}/{repo}/issues/{issueId}")
        #expect(hinted["/repos/swiftlang/swift-nio/issues/12"] == "/repos/{owner}/{repo}/issues/{issueId}")
        #expect(hinted["/repos/apple/swift"] == "/repos/{owner}/{repo}")
        let renamed = try templates(paths, hints: ["/repos/{org}/{name}"])
        #expect(renamed["/repos/apple/swift"] == "/repos/{org}/{name}")
    }

    @Test func aLiteralHintKeepsAnIdLookingSegment() throws {
        let result = try templates(["/releases/2026-01-01", "/releases/2026-02-01"], hints: ["/releases/2026-01-01"])
        #expect(result["/releases/2026-01-01"] == "/releases/2026-01-01")
        #expect(result["/releases/2026-02-01"] == "/releases/{releaseDate}")
    }

    @Test func badHintsSayWhy() {
        #expect(throws: PathHint.Invalid.self) { try PathHint(parsing: "repos/{owner}") }
        #expect(throws: PathHint.Invalid.self) { try PathHint(parsing: "/repos/{owner") }
        #expect(throws: PathHint.Invalid.self) { try PathHint(parsing: "/a/{x}/{x}") }
        #expect(throws: PathHint.Invalid.self) { try PathHint(parsing: "/a/x{y}") }
    }

    @Test func thousandsOfDistinctPathsAreCappedNotExploded() {
        // 3,000 distinct words at the root, where words are resources and never collapse.
        let letters = Array("abcdefghijklmnopqrstuvwxyz")
        let paths = (0..<3000).map { index in "/" + String([letters[index % 26], letters[(index / 26) % 26], letters[(index / 676) % 26], "x"]) }
        let result = PathGeneraliser(maximumTemplates: 1000).generalise(paths)
        #expect(result.templates.count == 1000)
        #expect(result.droppedTemplates == 2000)
        #expect(result.droppedPaths == 2000)
        #expect(result.matches.count == 1000)
    }

    @Test func manyOneOffLeavesUnderACollectionCollapse() throws {
        let names = ["readme", "license", "changelog", "contributing", "authors", "notice", "security", "funding", "citation"]
        let result = try templates(names.map { "/files/\($0)" })
        #expect(Set(result.values) == ["/files/{fileId}"])
    }

    @Test func rootAndTrailingSlashesArePreserved() throws {
        let result = try templates(["/", "/pokemon/25/", "/pokemon/"])
        #expect(result["/"] == "/")
        #expect(result["/pokemon/25/"] == "/pokemon/{pokemonId}/")
        #expect(result["/pokemon/"] == "/pokemon/")
    }

    @Test func shapesOfSegments() {
        #expect(PathSegmentShape.of("42") == .integer)
        #expect(PathSegmentShape.of("8F14E45F-CEEA-467F-A0E6-0F6C2D8E1C2A") == .uuid)
        #expect(PathSegmentShape.of("deadbeef01") == .hexIdentifier)
        #expect(PathSegmentShape.of("aGVsbG8gd29ybGQ9") == .opaqueIdentifier)
        #expect(PathSegmentShape.of("2026-02-30") == .date)
        #expect(PathSegmentShape.of("2026-13-01") == .word)
        #expect(PathSegmentShape.of("a%40b.io") == .email)
        #expect(PathSegmentShape.of("v1") == .word)
        #expect(PathSegmentShape.of("base64") == .word)
        #expect(PathSegmentShape.of("logo.png") == .word)
        #expect(PathSegmentShape.of("users") == .word)
    }
}
