// API Blueprint Format 1A into the contract model: headers classify the document into
// groups, resources, actions and data structures; list items carry everything else.
import KagamiContract
import KagamiJSON

/// Reads an API Blueprint document. Never throws: problems become annotations with positions.
public enum BlueprintParser {
    /// `describingSchemas`: the schemas read from MSON carry its descriptions as
    /// `description` keywords (what `kagami convert` writes); without it they are drafter's.
    public static func parse(_ text: String, describingSchemas: Bool = false) -> APIContract {
        var reader = BlueprintDocumentReader(source: BlueprintSource(text))
        reader.renderer.describesMembers = describingSchemas
        return reader.read()
    }
}

/// What a header line declares.
enum BlueprintHeader: Equatable {
    case group(name: String)
    case dataStructures
    case resource(name: String, uri: String)
    /// `# GET /uri` or `# Name [GET /uri]`: an action with its own URI.
    case endpoint(name: String, method: String, uri: String)
    case action(name: String, method: String)
    /// Anything else: the API name, a named type, or a heading inside a description.
    case other(title: String)

    static let methods: Set<String> = [
        "GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", "TRACE", "CONNECT", "LINK", "UNLINK",
    ]

    init(title: String) {
        if title.hasPrefix("Group ") {
            self = .group(name: String(title.dropFirst(6)).trimmedBlanks)
            return
        }
        if title == "Data Structures" {
            self = .dataStructures
            return
        }
        if let (method, uri) = BlueprintHeader.requestLine(title), uri.map(BlueprintHeader.isAbsolute) ?? true {
            self = uri.map { .endpoint(name: "", method: method, uri: $0) } ?? .action(name: "", method: method)
            return
        }
        if title.hasSuffix("]"), let open = title.lastIndex(of: "[") {
            let name = String(title[..<open]).trimmedBlanks
            let inside = String(title[title.index(after: open)..<title.index(before: title.endIndex)]).trimmedBlanks
            if let (method, uri) = BlueprintHeader.requestLine(inside), uri.map(BlueprintHeader.isAbsolute) ?? true {
                self = uri.map { .endpoint(name: name, method: method, uri: $0) } ?? .action(name: name, method: method)
                return
            }
            if !inside.isEmpty, !name.hasSuffix("]") {
                self = .resource(name: name, uri: inside)
                return
            }
        }
        if title.hasPrefix("/") {
            self = .resource(name: "", uri: title)
            return
        }
        self = .other(title: title)
    }

    /// drafter reads `[GET {username}]` as no action at all (and says why): the URI must be
    /// absolute.
    static func isAbsolute(_ uri: String) -> Bool {
        uri.hasPrefix("/") || uri.hasPrefix("{/") || uri.contains("://")
    }

    /// A header that would be an action but for a relative URI.
    static func relativeRequestLine(_ title: String) -> Bool {
        let inside = title.hasSuffix("]") ? title.lastIndex(of: "[").map { String(title[title.index(after: $0)..<title.index(before: title.endIndex)]) } ?? title : title
        guard let (_, uri) = requestLine(inside.trimmedBlanks), let uri else { return false }
        return !isAbsolute(uri)
    }

    /// `METHOD` or `METHOD URI`.
    static func requestLine(_ text: String) -> (String, String?)? {
        let parts = text.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard let first = parts.first, methods.contains(String(first)) else { return nil }
        if parts.count == 1 { return (String(first), nil) }
        return (String(first), String(parts[1]).trimmedBlanks)
    }
}

/// One header with the lines under it up to the next header.
struct BlueprintSection {
    var line: Int
    var level: Int
    var title: String
    var body: Range<Int>
}

struct BlueprintDocumentReader {
    let source: BlueprintSource
    var annotations: [Annotation] = []
    var renderer = MSONRenderer()
    var mson: MSONReader
    var models: [String: PayloadDraft] = [:]
    var namedTypeOrder: [String] = []

    init(source: BlueprintSource) {
        self.source = source
        self.mson = MSONReader(source: source)
    }

    // MARK: Document

    /// drafter refuses a document with a tab in it (at the first one); Kagami reads a tab as
    /// indentation to the next multiple of 4 columns, so the document stays usable.
    mutating func noteFirstTab() {
        guard let offset = source.bytes.firstIndex(of: 0x09),
              let index = source.lines.lastIndex(where: { $0.start <= offset }) else { return }
        let line = source.lines[index]
        var annotation = Annotation(
            .error, "the use of tab(s) '\\t' in source data isn't supported by API Blueprint tools (drafter, Apiary); indent with spaces",
            at: SourceLocation(line: index + 1, column: offset - line.start + 1, offset: offset, length: 1))
        annotation.keepsDocumentUsable = true
        annotations.append(annotation)
    }

    mutating func read() -> APIContract {
        var contract = APIContract(format: .apiBlueprint)
        let (metadataEnd, metadata) = readMetadata()
        contract.metadata = metadata
        for entry in metadata where entry.name.uppercased() == "HOST" {
            contract.servers.append(Server(url: entry.value))
        }
        let (preamble, sections) = splitSections(from: metadataEnd)
        contract.description = source.block(preamble, strip: 0).trimmedNewlines

        let classified = sections.map { ($0, BlueprintHeader(title: $0.title)) }
        collectNamedTypes(classified)
        renderer.resolveNamedKinds()
        renderer.checkNamedTypes(order: namedTypeOrder)

        var groups: [ResourceGroup] = [ResourceGroup(name: "")]
        var resourceLevel: Int?
        var resourceIsEndpoint = false
        var inAction = false
        for (index, entry) in classified.enumerated() {
            let (section, header) = entry
            let location = source.location(line: section.line)
            switch header {
            case .group(let name):
                groups.append(ResourceGroup(name: name, description: text(section.body), sourceLocation: location))
                resourceLevel = nil
                inAction = false
            case .resource(let name, let uri):
                checkURITemplate(uri, title: section.title, at: location)
                var resource = Resource(name: name, uriTemplate: uri, sourceLocation: location)
                readResourceBody(section.body, into: &resource)
                appendResource(resource, to: &groups)
                resourceLevel = section.level
                resourceIsEndpoint = false
                inAction = false
            case .endpoint(let name, let method, let uri):
                checkURITemplate(uri, title: section.title, at: location)
                if let level = resourceLevel, section.level > level, !resourceIsEndpoint, var resource = groups[groups.count - 1].resources.popLast() {
                    var action = Action(name: name, method: method, uriTemplate: uri, sourceLocation: location)
                    readActionBody(section.body, into: &action, resource: resource)
                    resource.actions.append(action)
                    groups[groups.count - 1].resources.append(resource)
                    inAction = true
                } else {
                    var resource = Resource(name: "", uriTemplate: uri, sourceLocation: location)
                    var action = Action(name: name, method: method, uriTemplate: uri, sourceLocation: location)
                    readActionBody(section.body, into: &action, resource: resource)
                    resource.actions.append(action)
                    appendResource(resource, to: &groups)
                    resourceLevel = section.level
                    resourceIsEndpoint = true
                    inAction = true
                }
            case .action(let name, let method):
                guard resourceLevel != nil, var resource = groups[groups.count - 1].resources.popLast() else {
                    annotations.append(Annotation(.warning, "unexpected header block, expected a group, resource or an action definition, e.g. '# Group <name>', '# <resource name> [<URI>]' or '## <action name> [<HTTP method> <URI>]'", at: location))
                    continue
                }
                var action = Action(name: name, method: method, uriTemplate: resource.uriTemplate, sourceLocation: location)
                readActionBody(section.body, into: &action, resource: resource)
                resource.actions.append(action)
                groups[groups.count - 1].resources.append(resource)
                inAction = true
            case .dataStructures:
                resourceLevel = nil
                inAction = false
            case .other(let title):
                if BlueprintHeader.relativeRequestLine(title) {
                    annotations.append(Annotation(.warning, "URI path in '\(title)' is not absolute, it should have a leading forward slash", at: location))
                }
                if index == 0, contract.name.isEmpty, groups.count == 1, groups[0].resources.isEmpty {
                    contract.name = title
                    let overview = text(section.body)
                    contract.description = contract.description.isEmpty ? overview : contract.description + "\n\n" + overview
                } else if dataStructureSections.contains(section.line) {
                    continue
                } else {
                    appendDescription("\(String(repeating: "#", count: section.level)) \(title)\n\n\(text(section.body))", groups: &groups, inAction: inAction, contract: &contract)
                }
            }
        }
        if groups.first?.resources.isEmpty == true { groups.removeFirst() }
        contract.groups = groups
        contract.dataStructures = namedTypeOrder.compactMap { name in
            guard let element = renderer.namedTypes[name] else { return nil }
            return DataStructure(
                name: name, description: element.description,
                example: renderer.render(element, stack: [name]), schema: renderer.schemaDocument(for: element, stack: [name]),
                sourceLocation: element.location)
        }
        noteFirstTab()
        contract.annotations = (annotations + mson.annotations + renderer.annotations).sorted {
            ($0.sourceLocation?.offset ?? 0) < ($1.sourceLocation?.offset ?? 0)
        }
        return contract
    }

    private mutating func checkURITemplate(_ uri: String, title: String, at location: SourceLocation) {
        if !BlueprintHeader.isAbsolute(uri) {
            annotations.append(Annotation(.warning, "URI path in '\(title)' is not absolute, it should have a leading forward slash", at: location))
        }
        for problem in URITemplateVariables.problems(in: uri) {
            annotations.append(Annotation(.warning, problem, at: location))
        }
    }

    private func appendResource(_ resource: Resource, to groups: inout [ResourceGroup]) {
        groups[groups.count - 1].resources.append(resource)
    }

    private func appendDescription(_ text: String, groups: inout [ResourceGroup], inAction: Bool, contract: inout APIContract) {
        // Appended in place: a document of many headings must not copy a growing text each time.
        func append(to existing: inout String) {
            if !existing.isEmpty { existing += "\n\n" }
            existing += text.trimmedNewlines
        }
        let last = groups.count - 1
        if var resource = groups[last].resources.popLast() {
            if inAction, var action = resource.actions.popLast() {
                append(to: &action.description)
                resource.actions.append(action)
            } else {
                append(to: &resource.description)
            }
            groups[last].resources.append(resource)
        } else if last > 0 {
            append(to: &groups[last].description)
        } else {
            append(to: &contract.description)
        }
    }

    private func text(_ range: Range<Int>) -> String {
        source.block(range, strip: 0).trimmedNewlines
    }

    /// `KEY: value` lines before the first blank line.
    private func readMetadata() -> (Int, [MetadataEntry]) {
        var entries: [MetadataEntry] = []
        var index = 0
        while index < source.lines.count, !source.lines[index].isBlank {
            let line = source.content(index)
            guard !line.hasPrefix("#"), let colon = line.firstIndex(of: ":") else { break }
            let key = String(line[..<colon])
            guard !key.isEmpty, !key.contains(" ") else { break }
            entries.append(MetadataEntry(name: key, value: String(line[line.index(after: colon)...]).trimmedBlanks))
            index += 1
        }
        return (entries.isEmpty ? 0 : index, entries)
    }

    /// Header lines (outside fenced code) cut the document into sections.
    private func splitSections(from start: Int) -> (Range<Int>, [BlueprintSection]) {
        var sections: [BlueprintSection] = []
        var fenced = false
        var preambleEnd = source.lines.count
        let bytes = source.bytes
        for index in start..<source.lines.count {
            let line = source.lines[index]
            guard line.indent < 4, line.contentStart < line.end else { continue }
            let first = bytes[line.contentStart]
            if first == 0x60 || first == 0x7E, line.end - line.contentStart >= 3,
                bytes[line.contentStart + 1] == first, bytes[line.contentStart + 2] == first
            {
                fenced.toggle()
                continue
            }
            guard !fenced else { continue }
            if let level = setextLevel(at: index, from: start) {
                if sections.isEmpty { preambleEnd = index }
                if var previous = sections.popLast() {
                    previous.body = previous.body.lowerBound..<index
                    sections.append(previous)
                }
                let title = source.content(index).trimmedBlanks
                sections.append(BlueprintSection(line: index, level: level, title: title, body: (index + 2)..<source.lines.count))
                continue
            }
            guard first == 0x23 else { continue }
            var level = 0
            var position = line.contentStart
            while position < line.end, bytes[position] == 0x23 { level += 1; position += 1 }
            guard level <= 6, position == line.end || bytes[position] == 0x20 || bytes[position] == 0x09 else { continue }
            var title = source.content(index).dropFirst(level).trimmedBlanks
            while title.hasSuffix("#") { title.removeLast() }
            title = title.trimmedBlanks
            if sections.isEmpty { preambleEnd = index }
            if var previous = sections.popLast() {
                previous.body = previous.body.lowerBound..<index
                sections.append(previous)
            }
            sections.append(BlueprintSection(line: index, level: level, title: title, body: (index + 1)..<source.lines.count))
        }
        return (start..<min(preambleEnd, source.lines.count), sections)
    }

    /// A Setext header (the specification allows them in place of `#`s): a line of text after
    /// a blank line, underlined by `===` (level 1) or `---` (level 2). A `---` after a blank
    /// line stays a rule, and list items are no titles.
    private func setextLevel(at index: Int, from start: Int) -> Int? {
        guard index + 1 < source.lines.count, index == start || source.lines[index - 1].isBlank else { return nil }
        let line = source.lines[index]
        let underline = source.lines[index + 1]
        guard underline.indent < 4, underline.end - underline.contentStart >= 3 else { return nil }
        let bytes = source.bytes
        let mark = bytes[underline.contentStart]
        guard mark == UInt8(ascii: "=") || mark == UInt8(ascii: "-") else { return nil }
        guard bytes[underline.contentStart..<underline.end].allSatisfy({ $0 == mark || $0 == 0x20 || $0 == 0x09 }) else { return nil }
        let first = bytes[line.contentStart]
        guard ![UInt8(ascii: "#"), UInt8(ascii: "-"), UInt8(ascii: "+"), UInt8(ascii: "*"), UInt8(ascii: ">"), UInt8(ascii: "|")].contains(first),
              !(UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first) else { return nil }
        return mark == UInt8(ascii: "=") ? 1 : 2
    }

    private static let typeSectionTitles: Set<String> = ["sample", "default", "members", "items", "properties"]

    /// Sections under `# Data Structures`: named types and their sections, not descriptions.
    private var dataStructureSections: Set<Int> = []
    /// Named types whose body starts with a block description followed by a list.
    private var blockDescribed: Set<String> = []

    // MARK: Named types and models

    private mutating func collectNamedTypes(_ classified: [(BlueprintSection, BlueprintHeader)]) {
        var inDataStructures = false
        var current: String?
        for (section, header) in classified {
            switch header {
            case .dataStructures:
                inDataStructures = true
                current = nil
                dataStructureSections.insert(section.line)
            case .group, .endpoint, .action:
                inDataStructures = false
                current = nil
            case .resource(let name, _):
                inDataStructures = false
                current = nil
                collectResourceTypes(name: name, body: section.body)
            case .other(let title):
                guard inDataStructures else { continue }
                dataStructureSections.insert(section.line)
                let location = source.location(line: section.line)
                if Self.typeSectionTitles.contains(title.lowercased()), let name = current, var element = renderer.namedTypes[name] {
                    // After a block description, the list under it was part of the description
                    // and the members are the ones of the `Properties`/`Items`/`Members` header.
                    if ["properties", "items", "members"].contains(title.lowercased()), blockDescribed.remove(name) != nil {
                        element.members = []
                    }
                    readTypeSection(title: title.lowercased(), body: section.body, into: &element, location: location)
                    renderer.namedTypes[name] = element
                    continue
                }
                var element = mson.element(signature: title, at: location)
                guard let name = element.name, !name.isEmpty else { continue }
                element.literal = nil
                let level = source.listLevel(section.body, codeIndent: 4)
                if !level.items.isEmpty, level.leading.contains(where: { !source.lines[$0].isBlank }) {
                    blockDescribed.insert(name)
                }
                mson.read(level: level, itemIndent: -4, into: &element, depth: 0)
                mson.check(element)
                define(name, element, at: location)
                current = name
            }
        }
    }

    private mutating func define(_ name: String, _ element: MSONElement, at location: SourceLocation) {
        if renderer.namedTypes[name] != nil {
            annotations.append(Annotation(.warning, "named type with name '\(name)' already exists", at: location))
            return
        }
        if element.typeName == name {
            annotations.append(Annotation(.error, "base type '\(name)' circularly referencing itself", at: location))
        }
        renderer.namedTypes[name] = element
        namedTypeOrder.append(name)
    }

    /// `### Sample`, `### Properties`… headers under a named type.
    private mutating func readTypeSection(title: String, body: Range<Int>, into element: inout MSONElement, location: SourceLocation) {
        let level = source.listLevel(body, codeIndent: 4)
        var holder = MSONElement(location: location)
        mson.read(level: ListLevel(leading: body.lowerBound..<body.lowerBound, items: level.items), itemIndent: -4, into: &holder, depth: 0)
        switch title {
        case "sample", "default":
            var section = MSONValueSection(text: nil, members: holder.members, location: location)
            if holder.members.isEmpty {
                // drafter keeps the paragraph's line break and adds one.
                let text = source.block(level.leading, strip: 0)
                if !text.isEmpty { section.text = text + "\n" }
            }
            if title == "sample" { element.samples.append(section) } else { element.defaults.append(section) }
        default:
            element.members.append(.group(holder.members))
        }
    }

    /// A named resource's `+ Attributes` is a named type; its `+ Model` can be referenced.
    private mutating func collectResourceTypes(name: String, body: Range<Int>) {
        guard !name.isEmpty else { return }
        let level = source.listLevel(body, codeIndent: 4)
        for item in level.items {
            let word = Self.keyword(item.text)
            if word == "attributes" || word == "attribute" {
                var element = attributesElement(item)
                // `## Profile [...]` with `+ Attributes (Profile)` names the resource's own
                // structure, not a base type.
                if element.typeName == name { element.typeName = nil }
                define(name, element, at: source.location(line: item.line))
            } else if word == "model" {
                models[name] = payloadDraft(item, keywordLength: 5)
            }
        }
    }

    static let resourceSections: Set<String> = ["parameters", "attributes", "attribute", "model", "headers"]
    static let actionSections: Set<String> = ["parameters", "attributes", "attribute", "relation", "request", "response", "headers", "body", "schema", "model"]

    static func keyword(_ text: String) -> String {
        let end = text.firstIndex { $0 == " " || $0 == "(" || $0 == ":" } ?? text.endIndex
        return text[..<end].lowercased()
    }

    mutating func attributesElement(_ item: ListItem) -> MSONElement {
        let location = source.location(line: item.line)
        var element = MSONElement(location: location)
        let signature = MSONSignature(item.text)
        mson.apply(attributes: signature.attributes, to: &element, at: location)
        mson.readNested(under: item, into: &element, depth: 0)
        return element
    }

    // MARK: Resources and actions

    /// The list items of a resource or action from its first known section on; the text and
    /// any lists before that section are its description, as in Markdown.
    private func sections(_ body: Range<Int>, known: Set<String>, description: inout String) -> ArraySlice<ListItem> {
        let level = source.listLevel(body, codeIndent: 4)
        description = text(level.leading)
        let first = level.items.firstIndex { known.contains(Self.keyword($0.text)) } ?? level.items.endIndex
        for item in level.items[..<first] {
            description += "\n\n" + source.block(item.line..<item.body.upperBound, strip: 0).trimmedNewlines
        }
        return level.items[first...]
    }

    private mutating func readResourceBody(_ body: Range<Int>, into resource: inout Resource) {
        for item in sections(body, known: Self.resourceSections, description: &resource.description) {
            switch Self.keyword(item.text) {
            case "parameters":
                resource.parameters = parameters(item, template: resource.uriTemplate)
            case "attributes", "attribute", "model":
                continue
            case "headers":
                annotations.append(Annotation(.warning, "the 'headers' section at this level is deprecated and will be removed in a future, use respective payload header section(s) instead", at: source.location(line: item.line)))
            default:
                annotations.append(Annotation(.warning, "ignoring unrecognized block", at: source.location(line: item.line)))
            }
        }
    }

    private mutating func readActionBody(_ body: Range<Int>, into action: inout Action, resource: Resource) {
        var actionParameters: [Parameter] = []
        var actionAttributes: MSONElement?
        var examples: [(requests: [(String, PayloadDraft)], responses: [(Int, PayloadDraft)])] = []
        for item in sections(body, known: Self.actionSections, description: &action.description) {
            let location = source.location(line: item.line)
            switch Self.keyword(item.text) {
            case "parameters":
                actionParameters = parameters(item, template: action.uriTemplate)
            case "attributes", "attribute":
                let attributes = attributesElement(item)
                // Rendered once here so unknown types are reported even without a request.
                _ = renderer.render(attributes)
                actionAttributes = attributes
            case "relation":
                if let colon = item.text.firstIndex(of: ":") {
                    action.relation = String(item.text[item.text.index(after: colon)...]).trimmedBlanks
                }
            case "request":
                let draft = payloadDraft(item, keywordLength: 7)
                if examples.isEmpty || !(examples[examples.count - 1].responses.isEmpty) {
                    examples.append(([], []))
                }
                examples[examples.count - 1].requests.append((draft.title, draft))
            case "response":
                let draft = payloadDraft(item, keywordLength: 8)
                let statusText = draft.title.split(separator: " ").first.map(String.init) ?? ""
                let status = Int(statusText) ?? 200
                if examples.isEmpty { examples.append(([], [])) }
                examples[examples.count - 1].responses.append((status, draft))
            case "model":
                continue
            case "headers", "body", "schema":
                annotations.append(Annotation(.warning, "ignoring unrecognized block", at: location))
            default:
                annotations.append(Annotation(.warning, "ignoring unrecognized block", at: location))
            }
        }
        // An action with its own URI inherits only the resource parameters its URI uses.
        var inherited = resource.parameters
        if action.uriTemplate != resource.uriTemplate {
            let variables = URITemplateVariables(action.uriTemplate)
            inherited = inherited.filter { variables.location(of: $0.name) != nil }
        }
        action.parameters = merged(inherited, actionParameters)
        if examples.isEmpty {
            annotations.append(Annotation(.warning, "action is missing a response", at: action.sourceLocation))
        }
        for example in examples {
            var transaction = TransactionExample()
            for (name, draft) in example.requests {
                var draft = draft
                if draft.attributes == nil, let actionAttributes { draft.attributes = actionAttributes }
                let requestParameters = draft.parameters.map { parameters($0, template: action.uriTemplate) } ?? []
                transaction.requests.append(Request(name: name, parameters: requestParameters, payload: payload(from: draft, status: nil)))
            }
            for (status, draft) in example.responses {
                transaction.responses.append(Response(status: status, payload: payload(from: draft, status: status)))
            }
            if !example.requests.isEmpty, example.responses.isEmpty {
                annotations.append(Annotation(.warning, "action is missing a response for a request", at: action.sourceLocation))
            }
            transaction.name = transaction.requests.first?.name ?? ""
            action.examples.append(transaction)
        }
    }

    private func merged(_ base: [Parameter], _ overrides: [Parameter]) -> [Parameter] {
        var result = base
        for parameter in overrides {
            if let index = result.firstIndex(where: { $0.name == parameter.name }) { result[index] = parameter } else { result.append(parameter) }
        }
        return result
    }
}
